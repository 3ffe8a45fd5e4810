"""Scoring of stored evaluations with the scoring engine (scoring.scores.engine).

A submission is scored in its own transaction (`scores_in_place`): the
engine is a pure function of ten answers, so the score costs microseconds
and the UPDATE that stores the answers stores it too (queueing it
cost a Redis message and more worker CPU than the request itself). The
periodic sweep (`evaluations_score_pending`) scores anything left unscored:
rows from before, or a submission whose scoring failed.
"""

import logging

from django.db import transaction
from django.utils import timezone

from scoring.scores.engine import SCORE_COLUMNS, ShsScore, score_answers, validate
from surveys.models import Evaluation

logger = logging.getLogger(__name__)


def set_scores(evaluation: Evaluation, score: ShsScore) -> None:
    """Copy the engine's figures onto the evaluation's score fields (not saved)."""
    for column, value in score.stored_values().items():
        setattr(evaluation, column, value)


def evaluation_score(*, evaluation_id: int) -> bool:
    """Score one submitted evaluation; idempotent (re-scoring gives the same figures)."""
    with transaction.atomic():
        evaluation = (
            Evaluation.objects.select_for_update().filter(pk=evaluation_id).submitted().first()
        )
        if evaluation is None:
            return False
        answers, problems = validate(evaluation.answers)
        if problems:
            # Cannot happen for a submitted evaluation (the form and the database
            # constraints check every answer), so say so loudly rather than guess.
            logger.error("evaluation %s cannot be scored: %s", evaluation.pk, problems)
            return False
        set_scores(evaluation, score_answers(answers))
        evaluation.scored_at = timezone.now()
        evaluation.save(update_fields=[*SCORE_COLUMNS, "scored_at"])
    return True


def evaluations_score_pending(limit: int = 5000) -> int:
    ids = list(Evaluation.objects.unscored().values_list("pk", flat=True)[:limit])
    return sum(evaluation_score(evaluation_id=pk) for pk in ids)


def scores_in_place(evaluation: Evaluation, answers: tuple[int, ...]) -> list[str]:
    """Score validated answers onto the evaluation (not saved); the fields to save.

    A failure leaves the evaluation unscored for the sweep instead of losing
    the participant's submission with it.
    """
    try:
        score = score_answers(answers)
    except Exception:
        logger.exception("evaluation %s not scored at submission; the sweep will", evaluation.pk)
        return []
    set_scores(evaluation, score)
    evaluation.scored_at = timezone.now()
    return [*SCORE_COLUMNS, "scored_at"]
