"""The research record: pre-registration versions, transcripts, annotations,
erasures, withdrawals and pilots. Each action writes exactly one audit row on
the study's chain and never the words it concerns (docs/design/audit.md §15.3)."""

from audit.models import AuditEntry
from criterion.models import REGISTERED_FIELDS
from criterion.preregistration.services import save_version
from tests.audit.test_actions import assert_nothing_of_the_participants, one_new_row

Kind = AuditEntry.Kind
PLAN = "We expect the verified prompts to lift reliability"


def test_each_pre_registration_save_is_one_row_naming_its_fields(study_a, personas):
    coordinator = personas["coordinator_a"]

    first = one_new_row(lambda: save_version(study_a, {"text": PLAN}, coordinator))
    corrected = one_new_row(lambda: save_version(study_a, {"alpha": 0.01}, coordinator))
    before = AuditEntry.objects.count()
    save_version(study_a, {"alpha": 0.01}, coordinator)  # nothing differs: no action

    assert AuditEntry.objects.count() == before
    version = study_a.preregistrations.get()
    assert [(row.kind, row.actor_id, row.chain, row.target) for row in (first, corrected)] == [
        (Kind.PREREGISTRATION_VERSION, coordinator.pk, f"study:{study_a.pk}",
         f"pre-registration {version.pk}"),
    ] * 2  # fmt: skip
    # Version 1 sets every registered field.
    assert first.details == {"version": 1, "in_place": False, "after_data_collection": False,
                             "fields": sorted(REGISTERED_FIELDS)}  # fmt: skip
    assert corrected.details == {
        "version": 1,
        "in_place": True,
        "after_data_collection": False,
        "fields": ["alpha"],
    }
    assert_nothing_of_the_participants(first, PLAN)


def test_a_transcript_import_and_a_redaction_are_one_row_each_without_the_words(
    study_a, personas, client_for
):
    from surveys.models import Transcript, Turn
    from surveys.protocol.transcripts import transcript_import, turn_redact
    from tests.surveys.runner import SessionRun

    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block1_shs")
    experimenter, coordinator = personas["experimenter_a"], personas["coordinator_a"]
    said = "User: I am Erika Musterfrau.\nAssistant: Hi."

    imported = one_new_row(
        lambda: transcript_import(
            session_id=run.session.pk, block=1, text=said, fmt="text", user=experimenter
        )
    )
    turn = Turn.objects.get(position=1)
    redacted = one_new_row(
        lambda: turn_redact(turn_id=turn.pk, user=coordinator, reason="her own name")
    )

    transcript = Transcript.objects.get()
    assert (imported.kind, imported.actor_id, imported.study_id, imported.target) == (
        Kind.TRANSCRIPT_IMPORTED, experimenter.pk, study_a.pk,
        f"transcript {transcript.pk}")  # fmt: skip
    assert imported.details == {"block": 1, "format": "text", "turns": 2, "replaced": False}
    assert (redacted.kind, redacted.actor_id, redacted.study_id, redacted.target) == (
        Kind.TRANSCRIPT_REDACTED, coordinator.pk, study_a.pk,
        f"transcript {transcript.pk} turn {turn.pk}")  # fmt: skip
    assert redacted.details["position"] == 1
    for entry in (imported, redacted):
        assert_nothing_of_the_participants(entry, "Erika", "her own name", transcript.code)


def test_an_annotation_file_is_one_row_whatever_its_annotators(study_a, personas):
    from criterion.annotations.services import annotations_import
    from criterion.models import AnnotationImport
    from tests.criterion.annotation_data import csv_bytes, packaged_codes, study_with_transcripts

    study_with_transcripts(study_a)
    code = sorted(packaged_codes(study_a))[0]
    data = csv_bytes([(code, "ann1", "factual_precision", "0.75"),
                      (code, "ann2", "factual_precision", ".5")])  # fmt: skip

    entry = one_new_row(
        lambda: annotations_import(
            study=study_a, data=data, file_name="a.csv", user=personas["coordinator_a"]
        )
    )

    first = AnnotationImport.objects.filter(study=study_a).order_by("pk").first()
    assert (entry.kind, entry.actor_id, entry.study_id, entry.target) == (
        Kind.ANNOTATIONS_IMPORTED, personas["coordinator_a"].pk, study_a.pk,
        f"annotation import {first.pk}")  # fmt: skip
    assert (entry.details["annotators"], entry.details["values"]) == (2, 2)
    assert_nothing_of_the_participants(entry, code)


def _completed(study, client_for, capture):
    from tests.surveys.runner import SessionRun

    run = SessionRun(client_for("experimenter_a"), study)
    with capture(execute=True):
        run.complete()
    return run


def test_an_erasure_is_one_row_without_the_code_typed(
    study_a, personas, client_for, django_capture_on_commit_callbacks
):
    from django.urls import reverse

    from surveys.models import SessionErasure

    run = _completed(study_a, client_for, django_capture_on_commit_callbacks)
    code = run.session.participant.code
    url = reverse("surveys:session_erase", args=[study_a.slug, run.token])
    client = client_for("coordinator_a")

    entry = one_new_row(lambda: client.post(url, {"participant_code": code}))

    erasure = SessionErasure.objects.get()
    assert (entry.kind, entry.actor_id, entry.study_id, entry.target) == (
        Kind.PARTICIPANT_ERASED, personas["coordinator_a"].pk, study_a.pk,
        f"session {run.session.pk}")  # fmt: skip
    assert entry.details == {"erasure": erasure.pk, "step_before": "complete"}
    assert_nothing_of_the_participants(entry, code, run.token)


def test_a_withdrawal_is_one_row_by_the_staff_member_at_the_side(study_a, personas, client_for):
    from django.urls import reverse

    from tests.surveys.runner import SessionRun

    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block1_shs")
    code = run.session.participant.code
    url = reverse("surveys:session_withdraw", args=[run.token])

    entry = one_new_row(lambda: run.client.post(url))

    assert run.session.step == "withdrawn"
    assert (entry.kind, entry.actor_id, entry.study_id, entry.target) == (
        Kind.WITHDRAWAL_PROCESSED, personas["experimenter_a"].pk, study_a.pk,
        f"session {run.session.pk}")  # fmt: skip
    assert entry.details == {"step_before": "block1_shs"}
    assert_nothing_of_the_participants(entry, code, run.token)


def test_approving_a_pilot_and_unmarking_it_are_one_row_each(
    study_a, personas, client_for, django_capture_on_commit_callbacks
):
    from django.urls import reverse

    run = _completed(study_a, client_for, django_capture_on_commit_callbacks)
    url = reverse("surveys:session_pilot", args=[study_a.slug, run.token])
    client = client_for("coordinator_a")

    entry = one_new_row(lambda: client.post(url, {"is_pilot": "1"}))
    before = AuditEntry.objects.count()
    client.post(url, {"is_pilot": "1"})  # already a pilot: no new decision

    assert AuditEntry.objects.count() == before
    assert (entry.kind, entry.actor_id, entry.study_id, entry.target) == (
        Kind.PILOT_APPROVED, personas["coordinator_a"].pk, study_a.pk,
        f"session {run.session.pk}")  # fmt: skip
    assert entry.details == {"requested": False}

    unmarked = one_new_row(lambda: client.post(url, {"is_pilot": "0"}))
    assert (unmarked.kind, unmarked.target) == (Kind.PILOT_UNMARKED, f"session {run.session.pk}")
