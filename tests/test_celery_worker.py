"""A real Celery worker against the real Redis: a task goes through the broker
and its result comes back; the scoring sweep scores a submission left unscored."""

import time

from django.utils import timezone

from shs_platform.celery import ping


def test_worker_answers_a_task_through_redis(celery_worker_process):
    result = ping.apply_async(args=["round trip"])
    assert result.get(timeout=30) == "round trip"


def test_worker_sweep_scores_a_submission_left_unscored(celery_worker_process, make_session):
    from surveys.models import Evaluation
    from surveys.tasks import score_pending_evaluations

    session = make_session()
    evaluation = Evaluation.objects.create(
        session=session,
        block=1,
        system=session.first_system,
        language="en",
        submitted_at=timezone.now(),
        **{f"q{i}": (2 if i % 2 else -1) for i in range(1, 11)},
    )
    # Stored without its score, as a submission whose scoring failed is.
    score_pending_evaluations.delay()

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        evaluation.refresh_from_db()
        if evaluation.scored_at:
            break
        time.sleep(0.2)
    assert evaluation.scored_at is not None, celery_worker_process.log_text()
    assert evaluation.shs == 0.75
    assert evaluation.band == "high"
    assert evaluation.flagged_pairs == ""
