"""Scoring of stored evaluations with the scoring engine (scoring.engine)."""

import logging

from django.db import transaction
from django.utils import timezone

from scoring.engine import SCORE_COLUMNS, ShsScore, score_answers, validate
from surveys.models import Evaluation
from surveys.tasks import score_evaluation

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


def schedule_scoring(evaluation_id: int) -> None:
    """Queue scoring once the submission has committed.

    If the broker is unreachable the submission still stands: the periodic
    sweep (score_pending_evaluations) scores it when the broker is back.
    """

    def enqueue():
        try:
            score_evaluation.delay(evaluation_id)
        except Exception:
            logger.warning(
                "could not queue scoring of evaluation %s; the sweep will",
                evaluation_id,
                exc_info=True,
            )

    transaction.on_commit(enqueue)
