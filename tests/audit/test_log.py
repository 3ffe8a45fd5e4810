"""Writing the audit log: one row per call, on the study's chain or the site's,
each sealed with the hash of the row before it; nothing secret, no answer
and no free text gets in, and no row is ever changed or deleted."""

import pytest
from django.db import IntegrityError, transaction

from audit.chain import GENESIS, row_hash
from audit.details import UnsafeDetails, checked_details
from audit.log import record
from audit.models import AppendOnly, AuditEntry
from tests.personas import make_user

Kind = AuditEntry.Kind


@pytest.fixture
def coordinator(db):
    return make_user("audit-coord@example.org")


def test_rows_of_a_study_form_their_own_chain_from_the_first(coordinator):
    first = record(Kind.EXPORT_CREATED, actor=coordinator, study_id=7, target="export 1")
    record(Kind.LOGIN, actor=coordinator)
    second = record(Kind.EXPORT_DOWNLOADED, actor=coordinator, study_id=7, target="export 1")
    other = record(Kind.EXPORT_CREATED, actor=coordinator, study_id=8)

    assert (first.chain, first.seq, first.previous_hash) == ("study:7", 1, GENESIS)
    assert (second.chain, second.seq, second.previous_hash) == ("study:7", 2, first.hash)
    assert (other.chain, other.seq, other.previous_hash) == ("study:8", 1, GENESIS)
    site = AuditEntry.objects.get(chain="site")
    assert (site.seq, site.study_id, site.kind) == (1, None, Kind.LOGIN)


def test_a_row_names_who_acted_as_they_were_then(coordinator):
    entry = record(Kind.LOGIN, actor=coordinator)
    coordinator.email = "renamed@example.org"
    coordinator.save()

    stored = AuditEntry.objects.get(pk=entry.pk)
    assert (stored.actor_id, stored.actor_label) == (coordinator.pk, "audit-coord@example.org")


def test_the_stored_row_gives_back_its_hash(coordinator):
    entry = record(
        Kind.SYSTEM_CHANGED,
        actor=coordinator,
        study_id=3,
        target="system 4 field temperature",
        details={"field": "temperature", "old": 0.7, "new": 1.25, "on": True, "n": 3},
    )

    stored = AuditEntry.objects.values().get(pk=entry.pk)
    assert stored["details"] == {
        "field": "temperature",
        "old": "0.7",
        "new": "1.25",
        "on": True,
        "n": 3,
    }
    assert row_hash(stored) == stored["hash"] == entry.hash
    assert len(entry.hash) == 64


def test_any_change_to_the_content_changes_the_hash(coordinator):
    entry = record(Kind.LOGIN, actor=coordinator, target="user 1")
    content = AuditEntry.objects.values().get(pk=entry.pk)

    for field, value in [
        ("target", "user 2"),
        ("actor_id", 99),
        ("seq", 2),
        ("kind", "login_failed"),
    ]:
        assert row_hash({**content, field: value}) != entry.hash, field


def test_a_row_without_a_person_is_the_command_line_or_an_anonymous_attempt(db):
    entry = record(Kind.EXPORT_CREATED, actor=None, study_id=1)

    assert (entry.actor_id, entry.actor_label) == (None, "")


def test_an_unknown_kind_is_refused(coordinator):
    with pytest.raises(ValueError, match="unknown audit kind"):
        record("export_deleted", actor=coordinator)
    assert not AuditEntry.objects.exists()


@pytest.mark.parametrize(
    "details",
    [
        {"password": "hunter2"},
        {"new_password": "x"},
        {"api_key": "sk-123"},
        {"API-Key": "sk-123"},
        {"token": "abc"},
        {"client_secret": "abc"},
        {"changes": [{"field": "model", "secret": "x"}]},
        {"answer": 3},
        {"free_text": "I think"},
        {"reason": "typo"},
        {"comment": "ok"},
        {"field": "description", "new": "x" * 255},
        {"field": "name", "new": "with \x00 NUL"},
        {"field": "name", "new": object()},
        {"a": {"b": {"c": {"d": {"e": 1}}}}},
        {f"k{n}": n for n in range(51)},
    ],
)
def test_secrets_answers_and_free_text_are_refused(coordinator, details):
    with pytest.raises(UnsafeDetails):
        record(Kind.STUDY_CHANGED, actor=coordinator, study_id=1, details=details)
    assert not AuditEntry.objects.exists()


def test_settings_their_old_and_new_values_and_short_names_pass(db):
    details = {
        "changes": [
            {"field": "title", "old": "Pilot", "new": "Main study"},
            {"field": "languages", "old": ["en"], "new": ["en", "de"]},
        ],
        "format": "xlsx",
        "include_free_text": False,
        "email": "x" * 240 + "@example.org",
    }
    assert checked_details(details) == details


def test_a_long_target_is_refused(coordinator):
    with pytest.raises(UnsafeDetails):
        record(Kind.STUDY_CHANGED, actor=coordinator, study_id=1, target="t" * 255)


def test_a_row_is_never_saved_again_nor_deleted(coordinator):
    entry = record(Kind.LOGIN, actor=coordinator)

    entry.target = "edited"
    with pytest.raises(AppendOnly):
        entry.save()
    with pytest.raises(AppendOnly):
        entry.delete()
    rows = AuditEntry.objects.filter(pk=entry.pk)
    with pytest.raises(AppendOnly):
        rows.update(target="edited")
    with pytest.raises(AppendOnly):
        rows.delete()
    with pytest.raises(AppendOnly):
        AuditEntry.objects.bulk_create([AuditEntry(chain="site", seq=2)])
    assert AuditEntry.objects.get(pk=entry.pk).target == ""


def test_a_row_built_with_the_id_of_another_is_inserted_never_updated(coordinator):
    entry = record(Kind.LOGIN, actor=coordinator)
    forged = AuditEntry(**{**AuditEntry.objects.values().get(pk=entry.pk), "target": "forged"})

    with pytest.raises(IntegrityError), transaction.atomic():
        forged.save()
    assert AuditEntry.objects.get(pk=entry.pk).target == ""


def test_two_rows_never_take_the_same_place_in_a_chain(coordinator):
    entry = record(Kind.LOGIN, actor=coordinator)
    values = AuditEntry.objects.values().get(pk=entry.pk)
    del values["id"]

    with pytest.raises(IntegrityError), transaction.atomic():
        AuditEntry(**values).save()


def test_the_row_is_part_of_the_callers_transaction(coordinator):
    with pytest.raises(RuntimeError), transaction.atomic():
        record(Kind.EXPORT_CREATED, actor=coordinator, study_id=1)
        raise RuntimeError("the action failed")

    assert not AuditEntry.objects.exists()
    assert record(Kind.EXPORT_CREATED, actor=coordinator, study_id=1).seq == 1
