"""A real Celery worker against the real Redis: a task goes through the broker
and its result comes back; a submitted evaluation is scored by the worker."""

import time

from django.utils import timezone

from shs_platform.celery import ping


def test_worker_answers_a_task_through_redis(celery_worker_process):
    result = ping.apply_async(args=["round trip"])
    assert result.get(timeout=30) == "round trip"


def test_worker_scores_a_submitted_evaluation(celery_worker_process, make_session):
    from surveys.models import Evaluation
    from surveys.scores import schedule_scoring

    session = make_session()
    evaluation = Evaluation.objects.create(
        session=session,
        block=1,
        system=session.first_system,
        language="en",
        submitted_at=timezone.now(),
        **{f"q{i}": (2 if i % 2 else -1) for i in range(1, 11)},
    )
    # on_commit fires at once outside a transaction (transactional_db).
    schedule_scoring(evaluation.pk)

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
