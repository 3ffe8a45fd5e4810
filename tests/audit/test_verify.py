"""`manage.py audit_verify` recomputes the chains and names the first broken
row of each: a row edited, removed or slipped in behind the application's
back (docs/design/audit.md §15.2)."""

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from audit.log import record
from audit.models import AuditEntry
from tests.personas import make_user

Kind = AuditEntry.Kind


@pytest.fixture
def rows(db):
    """Three rows on study 5's chain, two on the site's."""
    coordinator = make_user("verify@example.org")
    record(Kind.LOGIN, actor=coordinator)
    study = [
        record(Kind.EXPORT_CREATED, actor=coordinator, study_id=5, target=f"export {n}")
        for n in (1, 2, 3)
    ]
    record(Kind.LOGIN_FAILED, actor=None, target="verify@example.org")
    return study


def behind_the_apps_back(sql: str, params) -> None:
    """What someone with the database's owner rights could do: on PostgreSQL
    switch the refusal off first (inside the test's transaction, which is
    rolled back with it)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ALTER TABLE audit_auditentry DISABLE TRIGGER audit_entry_append_only")
        cursor.execute(sql, params)
        if connection.vendor == "postgresql":
            cursor.execute("ALTER TABLE audit_auditentry ENABLE TRIGGER audit_entry_append_only")


def verify(capsys, *args):
    """(exit status, stdout, stderr) of the command."""
    try:
        call_command("audit_verify", *args)
        status = 0
    except CommandError as error:
        status = error.returncode
    out = capsys.readouterr()
    return status, out.out, out.err


def test_intact_chains_pass(rows, capsys):
    status, out, err = verify(capsys)

    assert status == 0 and err == ""
    assert out.splitlines() == ["site: 2 rows, intact", "study:5: 3 rows, intact"]


def test_an_edited_row_is_named(rows, capsys):
    edited = rows[1]
    behind_the_apps_back(
        "UPDATE audit_auditentry SET target = %s WHERE id = %s", ["export 9", edited.pk]
    )

    status, out, err = verify(capsys)

    assert status == 1
    assert f"study:5: BROKEN at row id {edited.pk} (row 2 of the chain)" in err
    assert "was changed after it was written" in err
    assert "site: 2 rows, intact" in out


def test_an_edited_row_whose_hash_was_recomputed_breaks_the_next(rows, capsys):
    from audit.chain import row_hash

    edited, following = rows[1], rows[2]
    content = {**AuditEntry.objects.values().get(pk=edited.pk), "target": "export 9"}
    behind_the_apps_back(
        "UPDATE audit_auditentry SET target = %s, hash = %s WHERE id = %s",
        ["export 9", row_hash(content), edited.pk],
    )

    status, _out, err = verify(capsys, "--study", "5")

    assert status == 1
    assert f"BROKEN at row id {following.pk}" in err and "does not follow" in err


def test_a_removed_row_is_found(rows, capsys):
    behind_the_apps_back("DELETE FROM audit_auditentry WHERE id = %s", [rows[1].pk])

    status, _out, err = verify(capsys)

    assert status == 1
    assert f"BROKEN at row id {rows[2].pk}" in err and "rows are missing" in err


def test_one_study_is_checked_alone(rows, capsys):
    behind_the_apps_back(
        "UPDATE audit_auditentry SET actor_label = %s WHERE chain = %s", ["x", "site"]
    )

    status, out, err = verify(capsys, "--study", "5")

    assert (status, out, err) == (0, "study:5: 3 rows, intact\n", "")
    assert verify(capsys)[0] == 1


def test_an_empty_log_says_so(db, capsys):
    assert verify(capsys) == (0, "The audit log is empty.\n", "")
