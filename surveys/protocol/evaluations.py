"""The evaluation of the session's current SHS step, as its page and its
services find it."""

from django.db import IntegrityError, transaction

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
