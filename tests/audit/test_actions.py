"""Each staff action hooked so far writes exactly one audit row, with the right
kind, person and chain, and nothing of the participants (docs/design/audit.md
§15.3): logins and failed logins, second factors, exports and reports started
and downloaded, answer corrections."""

import json

import pytest
from allauth.mfa.models import Authenticator
from django.core.management import call_command
from django.urls import reverse

from audit.chain import canonical
from audit.models import AuditEntry
from exports.models import ExportJob
from exports.runner import export_job_run
from surveys.models import Evaluation, Participant
from tests.exports.factories import populate_study
from tests.personas import PASSWORD
from tests.surveys.runner import SessionRun
from tests.surveys.test_accounts import _totp

Kind = AuditEntry.Kind


@pytest.fixture(autouse=True)
def private_storage(settings, tmp_path):
    settings.PRIVATE_STORAGE_ROOT = tmp_path / "private"


def one_new_row(action) -> AuditEntry:
    """Runs `action` and returns the one row it added (fails on none or more)."""
    before = set(AuditEntry.objects.values_list("pk", flat=True))
    action()
    added = list(AuditEntry.objects.exclude(pk__in=before))
    assert len(added) == 1, [(row.kind, row.target) for row in added]
    return added[0]


def assert_nothing_of_the_participants(entry: AuditEntry, *secrets: str) -> None:
    text = canonical(dict(AuditEntry.objects.values().get(pk=entry.pk)))
    codes = Participant.objects.values_list("code", flat=True)
    for word in [*codes, *secrets]:
        assert word not in text, word


def test_a_login_is_one_site_row_without_the_password(client, personas):
    user = personas["coordinator_a"]

    entry = one_new_row(
        lambda: client.post(reverse("account_login"), {"login": user.email, "password": PASSWORD})
    )

    assert (entry.kind, entry.chain, entry.study_id) == (Kind.LOGIN, "site", None)
    assert (entry.actor_id, entry.actor_label) == (user.pk, user.email)
    assert_nothing_of_the_participants(entry, PASSWORD)


def test_a_failed_login_keeps_the_address_tried_never_the_password(client, personas):
    tried = "coord-a@example.org"

    entry = one_new_row(
        lambda: client.post(reverse("account_login"), {"login": tried, "password": "Guess-123!"})
    )

    assert (entry.kind, entry.chain, entry.actor_id, entry.target) == (
        Kind.LOGIN_FAILED, "site", None, tried)  # fmt: skip
    assert_nothing_of_the_participants(entry, "Guess-123!", "*****")


def test_an_address_no_one_has_is_kept_as_typed(client, db):
    entry = one_new_row(
        lambda: client.post(
            reverse("account_login"), {"login": "=cmd@example.org", "password": "x"}
        )
    )
    assert (entry.kind, entry.target) == (Kind.LOGIN_FAILED, "=cmd@example.org")


def _activate_totp(client, user, capture) -> str:
    client.post(reverse("account_login"), {"login": user.email, "password": PASSWORD})
    client.post(reverse("account_reauthenticate"), {"password": PASSWORD})
    secret = client.get(reverse("mfa_activate_totp")).context["form"].secret
    with capture(execute=True):
        client.post(reverse("mfa_activate_totp"), {"code": _totp(secret)})
    return secret


def test_second_factors_added_reset_and_removed_are_one_row_each(
    client, personas, django_capture_on_commit_callbacks
):
    user = personas["coordinator_a"]
    client.post(reverse("account_login"), {"login": user.email, "password": PASSWORD})
    client.post(reverse("account_reauthenticate"), {"password": PASSWORD})
    secret = client.get(reverse("mfa_activate_totp")).context["form"].secret

    def activate():
        with django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("mfa_activate_totp"), {"code": _totp(secret)})

    def regenerate():
        with django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("mfa_generate_recovery_codes"))

    def deactivate():
        with django_capture_on_commit_callbacks(execute=True):
            client.post(reverse("mfa_deactivate_totp"))

    # Recovery codes come and go with the app: still one row each time.
    added = one_new_row(activate)
    assert Authenticator.objects.filter(user=user).count() == 2
    reset = one_new_row(regenerate)
    removed = one_new_row(deactivate)
    assert not Authenticator.objects.filter(user=user).exists()

    rows = [(row.kind, row.chain, row.actor_id, row.details) for row in (added, reset, removed)]
    assert rows == [
        (Kind.MFA_ADDED, "site", user.pk, {"type": "totp"}),
        (Kind.MFA_RESET, "site", user.pk, {"type": "recovery_codes"}),
        (Kind.MFA_REMOVED, "site", user.pk, {"type": "totp"}),
    ]
    assert_nothing_of_the_participants(added, secret)


def test_a_wrong_code_of_the_second_factor_is_a_failed_login(
    client, personas, django_capture_on_commit_callbacks
):
    user = personas["coordinator_a"]
    _activate_totp(client, user, django_capture_on_commit_callbacks)
    client.post(reverse("account_logout"))
    client.post(reverse("account_login"), {"login": user.email, "password": PASSWORD})

    entry = one_new_row(lambda: client.post(reverse("mfa_authenticate"), {"code": "000000"}))

    assert (entry.kind, entry.actor_id, entry.target) == (Kind.LOGIN_FAILED, None, user.email)
    assert entry.details == {"step": "second factor"}


@pytest.fixture
def populated(personas, study_a):
    return populate_study(study_a, sessions=2)


@pytest.mark.parametrize(
    ("url_name", "data", "kind", "fmt"),
    [
        ("exports:export_list", {"format": "xlsx", "include_free_text": "on"},
         "export_created", "xlsx"),
        ("exports:study_report", {}, "report_created", "report-html"),
    ],
)  # fmt: skip
def test_starting_an_export_or_a_report_is_one_study_row(
    populated, personas, client_for, url_name, data, kind, fmt
):
    client = client_for("coordinator_a")
    study = populated.study

    entry = one_new_row(lambda: client.post(reverse(url_name, args=[study.slug]), data))

    job = ExportJob.objects.get()
    assert (entry.kind, entry.chain, entry.study_id) == (kind, f"study:{study.pk}", study.pk)
    assert entry.actor_id == personas["coordinator_a"].pk
    assert entry.target.endswith(f" {job.pk}")
    assert entry.details["format"] == fmt
    assert entry.details["include_free_text"] is (fmt == "xlsx")
    assert_nothing_of_the_participants(entry)


@pytest.mark.parametrize(
    ("fmt", "kind"), [("csv", "export_downloaded"), ("report-html", "report_downloaded")]
)
def test_downloading_an_export_or_a_report_is_one_study_row(
    populated, personas, client_for, fmt, kind
):
    from exports.services import export_job_create

    study = populated.study
    job = export_job_create(
        study=study, requested_by=personas["coordinator_a"], fmt=fmt, dispatch=False
    )
    export_job_run(job_id=job.pk)
    url = reverse("exports:job_download", args=[study.slug, job.token])
    client = client_for("coordinator_a")

    entry = one_new_row(lambda: b"".join(client.get(url).streaming_content))

    assert (entry.kind, entry.study_id, entry.actor_id) == (
        kind,
        study.pk,
        personas["coordinator_a"].pk,
    )
    assert entry.target.endswith(f" {job.pk}")
    assert_nothing_of_the_participants(entry)


def test_a_download_refused_writes_nothing(populated, client_for):
    from exports.services import export_job_create

    job = export_job_create(study=populated.study, requested_by=None, fmt="csv", dispatch=False)
    before = AuditEntry.objects.count()

    for persona in ("coordinator_b", "experimenter_a", "coordinator_a"):  # not finished yet
        client_for(persona).get(
            reverse("exports:job_download", args=[populated.study.slug, job.token])
        )

    # The logins of the three clients, nothing else.
    assert (
        list(AuditEntry.objects.order_by("pk")[before:].values_list("kind", flat=True))
        == ["login"] * 3
    )


def test_an_export_from_the_command_line_is_a_row_without_a_person(populated, tmp_path):
    study = populated.study

    entry = one_new_row(
        lambda: call_command(
            "export_study", str(study.pk), "--format", "csv", "-o", str(tmp_path / "out.csv")
        )
    )

    assert (entry.kind, entry.study_id, entry.actor_id, entry.actor_label) == (
        Kind.EXPORT_CREATED, study.pk, None, "")  # fmt: skip


def test_an_answer_correction_is_one_row_without_the_answer_or_the_reason(
    study_a, client_for, personas, django_capture_on_commit_callbacks
):
    run = SessionRun(client_for("experimenter_a"), study_a)
    with django_capture_on_commit_callbacks(execute=True):
        run.complete()
    evaluation = Evaluation.objects.get(session=run.session, block=1)
    url = reverse("surveys:evaluation_correct", args=[study_a.slug, evaluation.pk])
    client = client_for("coordinator_a")
    reason = "Participant ticked the wrong box"

    entry = one_new_row(
        lambda: client.post(url, {"item": "q1", "new_value": "-2", "reason": reason})
    )

    assert (entry.kind, entry.study_id, entry.actor_id) == (
        Kind.ANSWER_CORRECTED, study_a.pk, personas["coordinator_a"].pk)  # fmt: skip
    assert entry.target == f"evaluation {evaluation.pk}"
    correction = evaluation.corrections.get()
    assert entry.details == {"item": "q1", "correction": correction.pk}
    assert_nothing_of_the_participants(entry, reason, run.session.token)
    assert "-2" not in json.dumps(entry.details)
