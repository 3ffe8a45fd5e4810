"""A study's rows leave the log with the study (docs/design/audit.md §15.5).

The log is kept as long as the study's data: when the study is deleted, its
chain is deleted in the same transaction, and one row on the site's chain
says so, with the number of rows and the deleted chain's last hash, the
anchor against which a copy of the chain (its CSV) can still be checked.

The database allows this deletion only: on PostgreSQL the trigger lets a
row go once the study it names is gone (migration 0004), and refuses every
other UPDATE and DELETE. The model keeps refusing deletes of its own, so
this raw statement is the one way out.
"""

from django.db import connection, transaction

from audit.log import Kind, record
from audit.models import AuditEntry, study_chain


def study_chain_delete(study_id: int, *, actor=None) -> int:
    """Delete the chain of the study `study_id`, which must be deleted already
    in this transaction; the number of rows deleted (0 writes no site row)."""
    chain = study_chain(study_id)
    with transaction.atomic():
        last = AuditEntry.objects.filter(chain=chain).order_by("-seq").values("seq", "hash").first()
        if last is None:
            return 0
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {AuditEntry._meta.db_table} WHERE chain = %s", [chain])
            deleted = cursor.rowcount
        record(
            Kind.STUDY_CHAIN_DELETED,
            actor=actor,
            target=chain,
            details={"rows": deleted, "last_seq": last["seq"], "last_hash": last["hash"]},
        )
    return deleted
