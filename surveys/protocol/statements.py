"""The protocol's two statements written as SQL, each beside its ORM path.

An autosave and a step change are the most frequent writes of a study, and
each ran as several statements compiled anew by the ORM: a third of a
submission's CPU, and round trips inside the session's row lock that capped
how many submissions a second the database took (docs/benchmarks.md). Only
these two are written by hand:

- the autosave's conditional UPDATE: the answer is stored unless the item
  holds a newer one (PostgreSQL and SQLite);
- the step change as one statement on PostgreSQL: the step's record closed,
  the next step's record and block opened and the session's step saved, as
  data-modifying WITH clauses (one round trip instead of four).

`PROTOCOL_STATEMENTS = False` in the settings runs both through the ORM
(the step change always does on SQLite), and
tests/surveys/test_protocol_statements.py runs both paths side by side and
compares the rows they leave. A field added to StepRecord, InteractionBlock
or the session's step fields must be added here too: that test fails until
it is. As with `QuerySet.update()`, no signal is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from surveys.models import Evaluation, InteractionBlock, StepRecord, StudySession


def _enabled() -> bool:
    return getattr(settings, "PROTOCOL_STATEMENTS", True)


# -- the autosave -----------------------------------------------------------------------


def answer_stored(session: StudySession, block: int, item: str, answer: int, sequence: int) -> bool:
    """Store an autosaved answer with one UPDATE, unless the item has a newer one stored.

    The session's row lock orders the saves of a session, so the condition
    in the statement is the check the caller's ORM path makes on a read row.
    False: no row matched (no evaluation yet, submitted, or a newer answer),
    or the statements are off; the caller's ORM path then decides. `item`
    is one of ITEM_KEYS (checked by the caller), so the column name comes
    from the model.
    """
    if not _enabled():
        return False
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    postgres = connection.vendor == "postgresql"
    path = f"{{{item}}}" if postgres else f"$.{item}"
    with connection.cursor() as cursor:
        cursor.execute(
            _answer_statement(postgres, item),
            [answer, path, str(sequence) if postgres else sequence, now,
             session.pk, block, item if postgres else path, sequence],
        )  # fmt: skip
        return cursor.rowcount == 1


def _answer_statement(postgres: bool, item: str) -> str:
    quote = connection.ops.quote_name
    table, column = Evaluation._meta.db_table, Evaluation._meta.get_field(item).column
    if postgres:
        sequence_set = 'jsonb_set("answer_sequence", %s::text[], %s::jsonb)'
        stored = '("answer_sequence" ->> %s)::numeric'
    else:  # SQLite: the demo and the service-free test run
        sequence_set = 'json_set("answer_sequence", %s, %s)'
        stored = 'json_extract("answer_sequence", %s)'
    # An item never answered has no key: 0, below every sequence (they start at 1).
    return (
        f"UPDATE {quote(table)} SET {quote(column)} = %s, "
        f'"answer_sequence" = {sequence_set}, "last_answered_at" = %s '
        f'WHERE "session_id" = %s AND "block" = %s AND "submitted_at" IS NULL '
        f"AND COALESCE({stored}, 0) < %s"
    )


# -- the step change --------------------------------------------------------------------

# The session's fields a step change may write, and nothing else.
STEP_FIELDS = ("step", "step_entered_at", "last_activity_at", "ended_at", "completion_code")


@dataclass
class StepChange:
    """What entering a step writes: `left` is the step whose open record closes."""

    session: StudySession
    fields: list[str]
    left: str
    now: datetime
    record: StepRecord | None = None
    block: InteractionBlock | None = None


def write_step_change(change: StepChange) -> None:
    """All of a step change or none of it; a session row that is gone raises DatabaseError."""
    unknown = set(change.fields) - set(STEP_FIELDS)
    if unknown:
        raise ValueError(f"A step change does not write {sorted(unknown)}.")
    if _enabled() and connection.vendor == "postgresql":
        _as_one_statement(change)
    else:
        _through_the_orm(change)


def _through_the_orm(change: StepChange) -> None:
    StepRecord.objects.filter(
        session=change.session, step=change.left, completed_at__isnull=True
    ).update(completed_at=change.now)
    for opened in (change.record, change.block):
        if opened is not None:
            opened.save(force_insert=True)
    change.session.save(update_fields=change.fields)


def _as_one_statement(change: StepChange) -> None:
    clauses = [
        'UPDATE "surveys_steprecord" SET "completed_at" = %s'
        ' WHERE "session_id" = %s AND "step" = %s AND "completed_at" IS NULL'
    ]
    params = [change.now, change.session.pk, change.left]
    if change.record is not None:
        record = change.record
        clauses.append(
            'INSERT INTO "surveys_steprecord" ("session_id", "step", "entered_at",'
            ' "completed_at", "target_minutes") VALUES (%s, %s, %s, NULL, %s)'
        )
        params += [record.session_id, record.step, record.entered_at, record.target_minutes]
    if change.block is not None:
        block = change.block
        clauses.append(
            'INSERT INTO "surveys_interactionblock" ("session_id", "block", "system_id",'
            ' "started_at", "ended_at", "override_reason") VALUES (%s, %s, %s, %s, NULL, %s)'
        )
        params += [block.session_id, block.block, block.system_id, block.started_at]
        params.append(block.override_reason)
    session = change.session
    assignments = ", ".join(f'"{name}" = %s' for name in change.fields)
    params += [getattr(session, name) for name in change.fields] + [session.pk]
    withs = ", ".join(f"w{number} AS ({sql})" for number, sql in enumerate(clauses))
    sql = f'WITH {withs} UPDATE "surveys_studysession" SET {assignments} WHERE "id" = %s'
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        if cursor.rowcount != 1:
            raise DatabaseError("The session to update was not there.")
