"""How every sheet of an export reads and numbers its rows: in chunks, in the
export's own session order, with export-local evaluation ids, and the SHS
figures as stored (or as the scoring sweep will store them). Which rows an
export takes is surveys.selection."""

from django.db.models import CharField, F, Value
from django.db.models.functions import MD5, Cast, Concat

from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import SCORE_COLUMNS, score_answers

# Rows read per round trip when a sheet is streamed: memory stays flat.
CHUNK_SIZE = 2000


def evaluation_number(session_id: int, block: int) -> int:
    """The export-local evaluation_id: derived from the session number and block,
    so every sheet computes the same ID without a lookup table."""
    return 2 * session_id - 2 + block


def in_session_order(salt: str, session_pk: str):
    """The database's copy of anonymize.session_order_key, over the session key
    reached through `session_pk`: each sheet is read in session_id order."""
    return MD5(Concat(Value(salt), Cast(F(session_pk), output_field=CharField())))


def answers_and_scores(figures, is_scored: bool) -> tuple[list, dict]:
    """The answers and scores of an SHS row read as (*ITEM_KEYS, *SCORE_COLUMNS).

    One the scoring sweep has not reached yet has the figures it will store.
    """
    answers, stored = figures[: len(ITEM_KEYS)], figures[len(ITEM_KEYS) :]
    if is_scored:
        return answers, dict(zip(SCORE_COLUMNS, stored, strict=True))
    return answers, score_answers(answers).stored_values()
