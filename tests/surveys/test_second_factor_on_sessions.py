"""A study that requires TOTP of its coordinators requires it on every page of
the study, the session runner and the SHS autosave included (not only the
monitor, the records and the downloads)."""

import itertools

import pytest
from allauth.mfa.models import Authenticator
from django.db import connection
from django.http import Http404
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from surveys.access import SESSION_OF_MEMBER, _require_second_factor_in_session
from surveys.models import Evaluation, PromptEntry, Study, StudyMembership
from surveys.steps import Step
from tests.surveys.runner import SessionRun
from tests.surveys.statements import statement_shapes


@pytest.fixture
def run_at_shs(study_a, client_for):
    """A session of study A at its first SHS, run by the experimenter; then the
    study starts requiring a second factor of its coordinators."""
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_SHS)
    run.get()
    study_a.require_coordinator_mfa = True
    study_a.save()
    return run


_SEQUENCE = itertools.count(1)


def autosave(client, run, value="2"):
    # Autosaves are numbered: an older one never overwrites a newer answer.
    return client.post(
        reverse("surveys:session_answer", args=[run.token]),
        {"step": "block1_shs", "item": "q1", "value": value, "sequence": next(_SEQUENCE)},
    )


def test_the_session_page_sends_a_coordinator_without_totp_to_set_it_up(run_at_shs, client_for):
    coordinator = client_for("coordinator_a")

    for response in (
        coordinator.get(run_at_shs.url),
        coordinator.post(run_at_shs.url, {"step": "block1_shs", "q1": "2"}),
        coordinator.get(reverse("surveys:session_withdraw", args=[run_at_shs.token])),
    ):
        assert response.status_code == 302
        assert response.url == reverse("mfa_activate_totp")
    assert run_at_shs.session.step == Step.BLOCK1_SHS
    assert Evaluation.objects.get(session=run_at_shs.session).q1 is None


def test_the_prompt_log_refuses_a_coordinator_without_totp(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to(Step.BLOCK1_INTERACTION)
    study_a.require_coordinator_mfa = True
    study_a.save()

    response = client_for("coordinator_a").post(
        reverse("surveys:session_prompt_add", args=[run.token]),
        {"step": "block1_interaction", "category": "verified"},
    )

    assert response.url == reverse("mfa_activate_totp")
    assert not PromptEntry.objects.exists()


def test_the_autosave_refuses_a_coordinator_without_totp_and_saves_nothing(run_at_shs, client_for):
    response = autosave(client_for("coordinator_a"), run_at_shs)

    # A JSON answer, not a redirect the page's script would follow and take for success.
    assert response.status_code == 403
    assert response.json()["saved"] is False
    assert "second factor" in response.json()["error"]
    assert Evaluation.objects.get(session=run_at_shs.session).q1 is None


def test_a_coordinator_with_totp_and_the_experimenter_pass(run_at_shs, client_for, personas):
    Authenticator.objects.create(
        user=personas["coordinator_a"], type=Authenticator.Type.TOTP, data={"secret": "x"}
    )
    coordinator = client_for("coordinator_a")
    assert coordinator.get(run_at_shs.url).status_code == 200
    assert autosave(coordinator, run_at_shs).json()["saved"] is True
    # Experimenters are not asked for a second factor.
    assert run_at_shs.get().status_code == 200
    assert autosave(run_at_shs.client, run_at_shs, value="-1").status_code == 200
    assert Evaluation.objects.get(session=run_at_shs.session).q1 == -1


# -- read on every request: nothing kept between them --------------------------------


def _each_shape(client, run) -> dict[str, int]:
    """The status of one request of each shape of the access check: the page
    (session, study, systems), a turn's text (light: the session and its
    study; no such turn, so 404 when let through) and an autosave (locked)."""
    page = client.get(run.url)
    light = client.get(reverse("surveys:session_turn_text", args=[run.token, 0]))
    for response in (page, light):
        if response.status_code == 302:
            assert response.url == reverse("mfa_activate_totp")
    return {"page": page.status_code, "light": light.status_code,
            "for_update": autosave(client, run).status_code}  # fmt: skip


LET_THROUGH = {"page": 200, "light": 404, "for_update": 200}
REFUSED = {"page": 302, "light": 302, "for_update": 403}


def test_a_coordinator_without_totp_is_refused_in_every_shape(run_at_shs, client_for):
    assert _each_shape(client_for("coordinator_a"), run_at_shs) == REFUSED
    assert _each_shape(run_at_shs.client, run_at_shs) == LET_THROUGH  # the experimenter


def test_a_role_or_rule_changed_holds_from_the_next_request(run_at_shs, personas, study_a):
    experimenter = run_at_shs.client
    membership = StudyMembership.objects.get(study=study_a, user=personas["experimenter_a"])
    assert _each_shape(experimenter, run_at_shs) == LET_THROUGH

    membership.role = StudyMembership.Role.COORDINATOR
    membership.save()
    assert _each_shape(experimenter, run_at_shs) == REFUSED

    # Written past the model's save (no signal): nothing kept to go stale.
    Study.objects.filter(pk=study_a.pk).update(require_coordinator_mfa=False)
    assert _each_shape(experimenter, run_at_shs) == LET_THROUGH
    Study.objects.filter(pk=study_a.pk).update(require_coordinator_mfa=True)
    assert _each_shape(experimenter, run_at_shs) == REFUSED
    StudyMembership.objects.filter(pk=membership.pk).update(role="experimenter")
    assert _each_shape(experimenter, run_at_shs) == LET_THROUGH


def test_the_role_is_read_only_where_the_study_requires_totp(run_at_shs, study_a):
    def autosave_statements():
        with CaptureQueriesContext(connection) as captured:
            assert autosave(run_at_shs.client, run_at_shs).status_code == 200
        return statement_shapes(q["sql"] for q in captured.captured_queries)

    # The rule comes with the locked session row; the role is one more read.
    assert "SELECT surveys_studymembership" in autosave_statements()
    study_a.require_coordinator_mfa = False
    study_a.save()
    assert "SELECT surveys_studymembership" not in autosave_statements()


def test_a_membership_gone_since_the_sessions_read_lets_nothing_through(run_at_shs, personas):
    user = personas["experimenter_a"]
    session = SESSION_OF_MEMBER["light"].one(token=run_at_shs.token, user_id=user.pk)
    StudyMembership.objects.filter(user=user).delete()
    with pytest.raises(Http404):
        _require_second_factor_in_session(user, session)
