"""The evaluation of the session's current SHS step, as its page and its
services find it."""

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from surveys.models import Evaluation, StudySession
from surveys.prepared import PreparedLookup
from surveys.steps import BLOCK_OF_STEP

# Read by every SHS page, autosave fallback and submission: compiled once per
# thread (surveys/prepared.py).
EVALUATION_OF_BLOCK = PreparedLookup(
    lambda session_id, block: Evaluation.objects.filter(session_id=session_id, block=block),
    session_id=int,
    block=int,
)


def evaluation_for_display(session: StudySession) -> Evaluation:
    """The evaluation of the current SHS step, created at its first display.

    First display time is what the SHS completion time is measured from. Two
    tabs displaying it at the same instant get the same row: the unique
    constraint refuses the second insert, which then reads the first one's.
    """
    block = BLOCK_OF_STEP[session.step]
    evaluation = EVALUATION_OF_BLOCK.one(session_id=session.pk, block=block)
    if evaluation is not None:
        return evaluation
    try:
        with transaction.atomic():
            return Evaluation.objects.create(
                session=session,
                block=block,
                system=session.system_for_block(block),
                language=session.language,
                protocol=session.study.protocol,
            )
    except IntegrityError:
        found = EVALUATION_OF_BLOCK.one(session_id=session.pk, block=block)
        if found is None:  # refused for another reason than the other tab's row
            raise
        return found


def answer_stored(session: StudySession, item: str, answer: int, sequence: int) -> bool:
    """Store an autosaved answer with one UPDATE, unless the item has a newer one stored.

    The session's row lock orders the saves of a session, so the condition
    in the statement is the same check `shs_answer_save` makes on a read row.
    False: no row matched (no evaluation yet, submitted, or a newer answer),
    and the caller's ORM path tells these apart. Hand-written because the
    ORM's version of this statement cost a third of an autosave's CPU to
    build and compile; `item` is one of ITEM_KEYS (checked by the
    caller), so the column name comes from the model.
    """
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(
            _answer_statement(connection.vendor, item),
            [answer, *_sequence_set(connection.vendor, item, sequence), now,
             session.pk, BLOCK_OF_STEP[session.step], *_sequence_below(connection.vendor, item),
             sequence],
        )  # fmt: skip
        return cursor.rowcount == 1


def _answer_statement(vendor: str, item: str) -> str:
    quote = connection.ops.quote_name
    table, column = Evaluation._meta.db_table, Evaluation._meta.get_field(item).column
    if vendor == "postgresql":
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


def _sequence_set(vendor: str, item: str, sequence: int) -> list:
    if vendor == "postgresql":
        return [f"{{{item}}}", str(sequence)]
    return [f"$.{item}", sequence]


def _sequence_below(vendor: str, item: str) -> list:
    return [item] if vendor == "postgresql" else [f"$.{item}"]
