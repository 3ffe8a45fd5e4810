"""On PostgreSQL the database itself refuses to change or delete an audit row,
for the user the application runs as (docs/design/audit.md §15.2), and two
writers at once still leave one unbroken chain."""

import threading

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from audit.log import record
from audit.models import AuditEntry
from audit.verify import chain_verify
from tests.personas import make_user

Kind = AuditEntry.Kind


def run_sql(sql: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_auditentry SET target = 'edited' WHERE id = %s",
        "UPDATE audit_auditentry SET hash = hash WHERE id = %s",
        "DELETE FROM audit_auditentry WHERE id = %s",
    ],
)
def test_the_database_refuses_to_change_or_delete_a_row(postgres_only, db, statement):
    entry = record(Kind.LOGIN, actor=make_user("pg@example.org"))

    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        run_sql(statement, [entry.pk])

    assert AuditEntry.objects.filter(pk=entry.pk, target=entry.target).exists()


def test_the_refusal_holds_for_every_row_at_once(postgres_only, study_a):
    record(Kind.LOGIN, actor=None)
    record(Kind.EXPORT_CREATED, actor=None, study_id=study_a.pk)

    for statement in (
        "UPDATE audit_auditentry SET actor_label = ''",
        "DELETE FROM audit_auditentry",
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            run_sql(statement)
    assert AuditEntry.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_the_test_runners_flush_still_empties_the_log(postgres_only):
    # Tests that commit are cleaned up by TRUNCATE, which fires no row trigger.
    record(Kind.LOGIN, actor=None)

    call_command("flush", interactive=False, verbosity=0)

    assert not AuditEntry.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_writers_at_once_leave_one_unbroken_chain(postgres_only):
    """Each writer holds its transaction open after its row: without the chain's
    lock the other would read the same last row and claim the same place."""
    writers, rows_each = 4, 10
    start = threading.Barrier(writers)
    failures: list[BaseException] = []

    def write(number: int) -> None:
        try:
            start.wait()
            for row in range(rows_each):
                with transaction.atomic():
                    record(Kind.EXPORT_CREATED, actor=None, study_id=1, target=f"{number}.{row}")
                    # Still inside the transaction: the others must wait here.
                    threading.Event().wait(0.005)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert failures == []
    state = chain_verify("study:1")
    assert state.intact and state.rows == writers * rows_each
    seqs = list(AuditEntry.objects.filter(chain="study:1").values_list("seq", flat=True))
    assert sorted(seqs) == list(range(1, writers * rows_each + 1))


def test_a_deleted_studys_chain_leaves_with_it_and_the_site_keeps_its_anchor(study_a, study_b):
    # Given two studies with rows of their own
    for study in (study_a, study_b):
        record(Kind.STUDY_CREATED, actor=None, study_id=study.pk)
        record(Kind.EXPORT_CREATED, actor=None, study_id=study.pk)
    last = AuditEntry.objects.filter(study_id=study_a.pk).order_by("-seq").first()
    gone = study_a.pk

    # When study A is deleted
    study_a.delete()

    # Then its chain is gone, study B's is whole, and one site row anchors what went
    assert not AuditEntry.objects.filter(study_id=gone).exists()
    assert AuditEntry.objects.filter(study_id=study_b.pk).count() == 2
    anchor = AuditEntry.objects.get(kind=Kind.STUDY_CHAIN_DELETED)
    assert (anchor.chain, anchor.target) == ("site", f"study:{gone}")
    assert anchor.details == {"rows": 2, "last_seq": 2, "last_hash": last.hash}
    assert chain_verify("site").intact


def test_the_database_lets_only_a_deleted_studys_rows_go(postgres_only, study_a, study_b):
    kept = record(Kind.EXPORT_CREATED, actor=None, study_id=study_b.pk)
    orphan = record(Kind.EXPORT_CREATED, actor=None, study_id=study_a.pk)
    # The study's row goes without the signal, as a raw statement deletes it (its
    # dependants' foreign keys are checked at commit, which never comes here).
    with transaction.atomic():
        run_sql("DELETE FROM surveys_study WHERE id = %s", [study_a.pk])
        run_sql("DELETE FROM audit_auditentry WHERE id = %s", [orphan.pk])  # allowed
        # Raised inside: the atomic block rolls the study's deletion back too.
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            run_sql("DELETE FROM audit_auditentry WHERE id = %s", [kept.pk])
        transaction.set_rollback(True)
    assert AuditEntry.objects.filter(pk=kept.pk).exists()
