"""Walk every URL pattern of the URLconf (enumerated from the resolver, not a
hand list) for every persona: nothing answers 500, nobody reaches more than
their role allows, and every POST needs a CSRF token."""

from datetime import date, timedelta
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import NoReverseMatch, URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from api.models import ApiToken
from api.tokens import api_token_issue
from criterion.models import AutomatedResult
from criterion.preregistration.services import save_version
from exports.services import export_job_create
from surveys.invitations import invitation_create
from surveys.models import Retest, StudyMembership, Transcript, Turn
from surveys.models.studies import hash_token
from surveys.steps import Step
from surveys.views.personal_links import personal_links_create
from tests.personas import make_user
from tests.surveys.remote import make_remote_study
from tests.surveys.runner import SessionRun

PERSONAS = ["coordinator_a", "coordinator_b", "experimenter_a", "outsider", "anonymous"]
EVERYONE = {"coordinator_a", "coordinator_b", "experimenter_a", "outsider", "anonymous"}
STAFF = EVERYONE - {"anonymous"}
MEMBERS_A = {"coordinator_a", "experimenter_a"}
COORDINATOR_A = {"coordinator_a"}
CREATORS = {"coordinator_a", "coordinator_b"}

# Third-party and framework URLs are covered by their own projects' tests.
FOREIGN_NAMESPACES = ("admin",)
FOREIGN_PREFIXES = ("account_", "mfa_", "socialaccount_", "usersessions_")
FOREIGN_NAMES = {"set_language"}

# name: (who reaches it, how to build its arguments from the world)
ACCESS = {
    "home": (EVERYONE, lambda w: {}),
    "healthz": (EVERYONE, lambda w: {}),
    "scoring:calculator": (EVERYONE, lambda w: {}),
    "scoring:calculator_in": (EVERYONE, lambda w: {"language": "de"}),
    "scoring:calculator_download": (EVERYONE, lambda w: {"file_format": "json"}),
    "scoring:api_score": (EVERYONE, lambda w: {}),
    "surveys:study_list": (STAFF, lambda w: {}),
    "surveys:study_create": (CREATORS, lambda w: {}),
    "surveys:study_detail": (MEMBERS_A, lambda w: {"slug": w.study.slug}),
    "surveys:study_edit": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:study_status": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:consent_text_list": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:consent_text_edit": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "language": "de"}),
    "surveys:consent_text_version": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.consent_text.pk}),
    "surveys:task_text_list": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:task_text_edit": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "language": "de"}),
    "surveys:consent_record": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "token": w.session.token}),
    "surveys:system_create": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:system_edit": (COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.system.pk}),
    "surveys:member_list": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:invitation_revoke": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.invitation.pk}),
    "surveys:invitation_resend": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.invitation.pk}),
    "surveys:member_remove": (COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.member.pk}),
    "surveys:member_role": (COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.member.pk}),
    "surveys:invitation_accept": (EVERYONE, lambda w: {"token": w.invitation_token}),
    "surveys:remote_take": (EVERYONE, lambda w: {"code": w.remote_study.public_code}),
    # The retest's link is the participant's key; staff reach it by the code (§14.2).
    "surveys:retest": (EVERYONE, lambda w: {"token": w.retest_token}),
    # Its printable slip, by the same key.
    "surveys:retest_slip": (EVERYONE, lambda w: {"token": w.retest_token}),
    "surveys:retest_start": (MEMBERS_A, lambda w: {"slug": w.study.slug}),
    "surveys:retest_staff": (MEMBERS_A, lambda w: {"slug": w.study.slug, "pk": w.retest.pk}),
    "surveys:remote_take_personal": (
        EVERYONE, lambda w: {"code": w.remote_study.public_code, "token": w.link_token}),
    "surveys:personal_links": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:payment_list": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:payment_list_csv": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:audit_log": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:audit_log_csv": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    # The site's audit log: its administrators only, and no persona is one.
    "audit:site_log": (set(), lambda w: {}),
    "audit:site_log_csv": (set(), lambda w: {}),
    "surveys:session_start": (MEMBERS_A, lambda w: {"slug": w.study.slug}),
    "surveys:session": (MEMBERS_A, lambda w: {"token": w.session.token}),
    "surveys:session_prompt_add": (MEMBERS_A, lambda w: {"token": w.session.token}),
    "surveys:session_prompt_remove": (
        MEMBERS_A, lambda w: {"token": w.session.token, "pk": w.prompt.pk}),
    "surveys:session_answer": (MEMBERS_A, lambda w: {"token": w.session.token}),
    "surveys:session_chat": (MEMBERS_A, lambda w: {"token": w.session.token}),
    "surveys:session_chat_retry": (MEMBERS_A, lambda w: {"token": w.session.token}),
    "surveys:session_chat_tag": (MEMBERS_A, lambda w: {"token": w.session.token, "pk": w.turn.pk}),
    "surveys:session_chat_untag": (
        MEMBERS_A, lambda w: {"token": w.session.token, "pk": w.turn.pk}),
    "surveys:session_turn_text": (
        MEMBERS_A, lambda w: {"token": w.session.token, "pk": w.turn.pk}),
    "surveys:system_check": (COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.system.pk}),
    "surveys:session_pilot_request": (MEMBERS_A, lambda w: {"token": w.session.token}),
    "surveys:session_withdraw": (MEMBERS_A, lambda w: {"token": w.session.token}),
    "surveys:session_transcripts": (MEMBERS_A, lambda w: {"token": w.session.token}),
    "surveys:transcript_import": (MEMBERS_A, lambda w: {"token": w.session.token, "block": 1}),
    "surveys:transcript_turn_redact": (
        COORDINATOR_A, lambda w: {"token": w.session.token, "pk": w.turn.pk}),
    "surveys:monitor": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:session_find": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "surveys:session_record": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "token": w.session.token}),
    "surveys:session_pilot": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "token": w.session.token}),
    "surveys:session_erase": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "token": w.session.token}),
    "surveys:evaluation_correct": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.evaluation.pk}),
    "exports:export_list": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "exports:job_detail": (COORDINATOR_A, lambda w: {"slug": w.study.slug, "token": w.job.token}),
    "exports:job_status": (COORDINATOR_A, lambda w: {"slug": w.study.slug, "token": w.job.token}),
    "exports:job_download": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "token": w.job.token}),
    "exports:study_report": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "criterion:preregistration": (MEMBERS_A, lambda w: {"slug": w.study.slug}),
    "criterion:preregistration_edit": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "criterion:preregistration_canonical": (
        MEMBERS_A, lambda w: {"slug": w.study.slug, "version": w.preregistration.version}),
    "criterion:annotations": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "criterion:annotation_package": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "criterion:annotation_sheet": (COORDINATOR_A, lambda w: {"slug": w.study.slug}),
    "criterion:automated_results": (MEMBERS_A, lambda w: {"slug": w.study.slug}),
    "criterion:automated_result_create": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "system_pk": w.automated.system_id}),
    "criterion:automated_result_edit": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.automated.pk}),
    "criterion:automated_result_delete": (
        COORDINATOR_A, lambda w: {"slug": w.study.slug, "pk": w.automated.pk}),
    # The API's schema is public; its documentation is for staff (docs/design/api.md §16.4).
    # Its endpoints take a token, never a session: tests/security/test_api_walk.py.
    "api:schema": (EVERYONE, lambda w: {}),
    "api:docs": (STAFF - {"outsider"}, lambda w: {}),
    "api_tokens:list": (STAFF - {"outsider"}, lambda w: {}),
    "api_tokens:revoke": (COORDINATOR_A, lambda w: {"pk": w.api_token.pk}),
}  # fmt: skip
# Public by design, reachable by anyone: these never answer 404 for a persona.
PUBLIC = {name for name, (who, _build) in ACCESS.items() if who == EVERYONE}
# The one POST endpoint without CSRF: a stateless public API that reads no cookie.
CSRF_EXEMPT = {"scoring:api_score"}


def project_url_names() -> set[str]:
    names = set()

    def walk(patterns, namespace):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                inner = entry.namespace or namespace
                if inner in FOREIGN_NAMESPACES:
                    continue
                walk(entry.url_patterns, inner)
            elif isinstance(entry, URLPattern) and entry.name:
                if entry.name.startswith(FOREIGN_PREFIXES) or entry.name in FOREIGN_NAMES:
                    continue
                names.add(f"{namespace}:{entry.name}" if namespace else entry.name)

    walk(get_resolver().url_patterns, None)
    return names


class World:
    """One study A with a session mid-way, an evaluation, a prompt, a transcript
    turn, an invitation and a finished export; study B exists beside it."""

    def __init__(self, study, personas, client_for):
        self.study = study
        self.system = study.systems.first()
        self.invitation, self.invitation_token = invitation_create(
            study=study,
            email="walk@example.org",
            role="experimenter",
            invited_by=personas["coordinator_a"],
        )
        self.member = StudyMembership.objects.create(
            user=make_user("walk-member@example.org"), study=study, role="experimenter"
        )
        run = SessionRun(client_for("experimenter_a"), study)
        run.advance_to(Step.BLOCK2_INTERACTION)
        run.log_prompt("block2_interaction", "verified")
        self.session = run.session
        self.evaluation = self.session.evaluations.get(block=1)
        self.prompt = self.session.blocks.get(block=2).prompts.get()
        self.consent_text = self.session.consent.consent_text
        transcript = Transcript.objects.create(
            interaction=self.session.blocks.get(block=1), source=Transcript.Source.IMPORT
        )
        self.turn = Turn.objects.create(transcript=transcript, position=1, role="user", text="Hi")
        self.job = export_job_create(study=study, requested_by=personas["coordinator_a"], fmt="csv")
        self.job.refresh_from_db()
        self.preregistration = save_version(study, {}, personas["coordinator_a"])
        self.automated = AutomatedResult.objects.create(
            system=study.systems.first(),
            benchmark="Walk benchmark",
            score=0.5,
            measured_on=date(2026, 1, 1),
            source="walk",
        )
        # The public link of a remote study is open to anyone (docs/design/remote.md §11.2).
        self.remote_study = make_remote_study("http://127.0.0.1:9/v1", slug="walk-remote")
        (self.link_token,) = personal_links_create(
            study=self.remote_study, count=1, created_by=None
        )
        self.api_token, _secret = api_token_issue(
            user=personas["coordinator_a"],
            name="walk",
            access=ApiToken.Access.READ,
            studies=[study],
            expires_at=timezone.now() + timedelta(days=1),
        )
        self.retest_token = "walk-retest-token"
        self.retest = Retest.objects.create(
            session=self.session,
            token_hash=hash_token(self.retest_token),
            due_at=timezone.now() + timedelta(days=7),
        )


@pytest.fixture
def world(study_a, study_b, personas, client_for):
    return World(study_a, personas, client_for)


def test_every_project_url_has_an_access_rule():
    from tests.security.test_api_walk import API_ACCESS

    assert project_url_names() == set(ACCESS) | set(API_ACCESS)


@pytest.mark.parametrize("persona", PERSONAS)
def test_no_url_errors_or_leaks_for_any_persona(persona, world, client_for):
    client = client_for(persona)
    for name, (allowed, build) in ACCESS.items():
        url = reverse(name, kwargs=build(world))
        for method in ("get", "post"):
            response = getattr(client, method)(url, {})
            status = response.status_code
            assert status < 500, f"{method.upper()} {name} as {persona}: {status}"
            assert status != 403, f"{method.upper()} {name} as {persona}: 403 leaks existence"
            if persona in allowed:
                continue
            # 405 (wrong method) is decided before any object is looked up, so it
            # tells nothing about what exists.
            if persona == "anonymous":
                assert status in (302, 404, 405), f"{name}: {status}"
                if status == 302:
                    assert response.url.startswith(reverse("account_login")), name
            else:
                assert status in (404, 405), f"{method.upper()} {name} as {persona}: {status}"


def test_every_post_needs_a_csrf_token(world, personas):
    """With CSRF checks on (as in a browser), a POST without the token is refused."""
    for persona in ("coordinator_a", "experimenter_a"):
        client = Client(enforce_csrf_checks=True)
        client.force_login(personas[persona])
        for name, (allowed, build) in ACCESS.items():
            if persona not in allowed or name in CSRF_EXEMPT:
                continue
            response = client.post(reverse(name, kwargs=build(world)), {})
            assert response.status_code in (403, 405), f"POST {name} as {persona}"


def test_the_csrf_exempt_api_reads_no_session(client, db):
    response = Client(enforce_csrf_checks=True).post(
        reverse("scoring:api_score"),
        {"responses": {f"q{i}": 0 for i in range(1, 11)}},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert "sessionid" not in response.cookies


# Characters PostgreSQL refuses in text (NUL) or no token, slug or code holds
# (control characters): in a URL parameter they answer 404, in a query or form
# parameter 400, never a 500 from the database. SQLite accepts NUL, so the 500
# shows on PostgreSQL only (CI runs the walk there).
def bad_values(value) -> list[str]:
    return [f"{value}\x00", "\x00", f"\x00{value}", f"{value}\x01", f"{value}\n"]


def url_with(name: str, kwargs: dict, parameter: str, bad: str) -> str:
    """The URL of `name` with `bad` (percent-encoded) in place of one parameter.

    reverse() refuses a value its converter would not match, so the URL is
    reversed with a marker of the parameter's type, which is then replaced.
    """
    original = kwargs[parameter]
    marker = 987654321 if isinstance(original, int) else "zz-marker-zz"
    try:
        url = reverse(name, kwargs={**kwargs, parameter: marker})
    except NoReverseMatch:  # a fixed choice (a file format): replace the real value
        url, marker = reverse(name, kwargs=kwargs), original
    assert url.count(str(marker)) == 1, url
    return url.replace(str(marker), quote(bad, safe=""))


def test_no_url_parameter_with_a_nul_or_control_character_errors(world, client_for):
    client = client_for("coordinator_a")  # reaches every view and every lookup
    tried = 0
    for name, (_allowed, build) in ACCESS.items():
        kwargs = build(world)
        for parameter, value in kwargs.items():
            for bad in bad_values(value):
                url = url_with(name, kwargs, parameter, bad)
                for method in ("get", "post"):
                    status = getattr(client, method)(url, {}).status_code
                    assert status in (400, 404), f"{method.upper()} {url!r}: {status}"
                    tried += 1
    assert tried > 200  # every parameter of every pattern was tried


# Every name a view of the platform reads from a query string or a form.
FORM_FIELDS = [
    "code", "step", "item", "value", "category", "text", "override_reason", "fragment",
    "next", "is_pilot", "language", "lang", "email", "role", "title", "slug", "fmt",
    "participant_code", "reason", "new_value", "q1", "consent", "password1", "login",
    "person", "kind", "since", "until", "page",
]  # fmt: skip


@pytest.mark.parametrize("where", ["query", "form"])
def test_a_nul_in_any_query_or_form_parameter_answers_400(where, world, client_for):
    client = client_for("coordinator_a")
    for name, (_allowed, build) in ACCESS.items():
        url = reverse(name, kwargs=build(world))
        for field in FORM_FIELDS:
            data = {field: "P-\x00"}
            if where == "query":
                response = client.get(url, data)
            else:
                response = client.post(url, data)
            assert response.status_code == 400, f"{where} {field} on {name}"
        assert client.get(url, {"P-\x00": "1"}).status_code == 400, f"a NUL in a name: {name}"


def test_the_participant_code_search_with_a_nul_answers_400(world, client_for):
    """The case that reached PostgreSQL: the monitor's search by participant code."""
    url = reverse("surveys:session_find", args=[world.study.slug])
    response = client_for("coordinator_a").get(url, {"code": "P-ABC\x00DEF"})
    assert response.status_code == 400


def test_a_session_cookie_with_a_nul_is_ignored(world, personas):
    """The session middleware looks its cookie up in the database: one holding
    NUL counts as no cookie (logged out), not a 500."""
    client = Client()
    client.cookies["sessionid"] = "abcdefgh\x00ijkl"
    response = client.get(reverse("surveys:study_list"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("account_login"))
