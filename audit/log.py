"""Writing the audit log: `record` adds one row to a chain (docs/design/audit.md
§15.2), inside the caller's transaction, so the row is there exactly when the
action it describes is.

Call it last in the transaction, after the action's own row locks: it holds
its chain's lock until the transaction ends, and taking it last keeps one
order of locks everywhere, so two actions never wait for each other.
"""

from django.db import connection, transaction
from django.utils import timezone

from audit.chain import GENESIS, row_hash
from audit.details import checked_details, checked_text
from audit.models import SITE_CHAIN, AuditEntry, study_chain

Kind = AuditEntry.Kind

# The first key of PostgreSQL's two-key advisory locks that guard the chains
# ("AUDT"); the second is the chain's name hashed.
LOCK_NAMESPACE = 0x41554454


def record(
    kind: str,
    *,
    actor,
    study_id: int | None = None,
    target: str = "",
    details: dict | None = None,
) -> AuditEntry:
    """Append one row to the study's chain, or to the site's without a study.

    `actor` is the user who acted (None for the command line or a failed
    login). `details` are checked by audit.details: a secret, an answer or
    free text raises UnsafeDetails and nothing is written.
    """
    if kind not in Kind.values:
        raise ValueError(f"unknown audit kind {kind!r}")
    content = {
        "chain": SITE_CHAIN if study_id is None else study_chain(study_id),
        "study_id": study_id,
        "target": checked_text(target, "target"),
        "details": checked_details(details or {}),
        "kind": kind,
        **_actor_fields(actor),
    }
    with transaction.atomic():
        _lock_chain(content["chain"])
        last = (
            AuditEntry.objects.filter(chain=content["chain"])
            .order_by("-seq")
            .values_list("seq", "hash")
            .first()
        )
        seq, previous_hash = last if last else (0, GENESIS)
        content.update(seq=seq + 1, previous_hash=previous_hash, created_at=timezone.now())
        entry = AuditEntry(**content, hash=row_hash(content))
        entry.save()
    return entry


def _actor_fields(actor) -> dict:
    if actor is None or not getattr(actor, "is_authenticated", False):
        return {"actor_id": None, "actor_label": ""}
    return {"actor_id": actor.pk, "actor_label": checked_text(actor.email or "", "actor")}


def _lock_chain(chain: str) -> None:
    """One writer per chain at a time, until the transaction ends: each row
    must follow the one committed before it. SQLite needs nothing: it lets
    one transaction write at a time (and the settings begin every
    transaction as a writer)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [LOCK_NAMESPACE, chain])
