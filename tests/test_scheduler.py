"""The demo's in-process scheduler runs the beat schedule's tasks at their intervals."""

import threading
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from shs_platform.scheduler import Scheduler, is_wanted
from surveys.models import StudySession
from surveys.steps import Step


class FakeClock:
    """Seconds that pass only when the test says so."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def idle_session(make_session, study_a):
    session = make_session(step=Step.BLOCK1_INTERACTION)
    StudySession.objects.filter(pk=session.pk).update(
        last_activity_at=timezone.now() - timedelta(minutes=study_a.inactivity_timeout_minutes + 1)
    )
    return session


def test_due_tasks_run_at_their_intervals(idle_session):
    clock = FakeClock()
    scheduler = Scheduler(settings.CELERY_BEAT_SCHEDULE, clock=clock)

    # Everything runs at start: the idle session is marked abandoned.
    assert len(scheduler.run_due()) == len(settings.CELERY_BEAT_SCHEDULE)
    idle_session.refresh_from_db()
    assert idle_session.step == Step.ABANDONED
    assert idle_session.ended_at is not None

    clock.now += 59
    assert scheduler.run_due() == []
    clock.now += 1
    assert scheduler.run_due() == ["surveys.tasks.score_pending_evaluations"]
    clock.now += 240
    assert set(scheduler.run_due()) == {
        "surveys.tasks.score_pending_evaluations",
        "surveys.tasks.mark_abandoned_sessions",
        "exports.tasks.resume_stalled_jobs",
    }
    clock.now += 3300
    assert "exports.tasks.delete_expired_files" in scheduler.run_due()


def test_a_failing_task_does_not_stop_the_others(idle_session):
    schedule = {
        "broken": {"task": "no.such.task", "schedule": 60.0},
        "abandon": {"task": "surveys.tasks.mark_abandoned_sessions", "schedule": 300.0},
    }
    scheduler = Scheduler(schedule, clock=FakeClock())

    assert scheduler.run_due() == ["surveys.tasks.mark_abandoned_sessions"]
    idle_session.refresh_from_db()
    assert idle_session.step == Step.ABANDONED


def test_only_fixed_intervals_are_accepted():
    with pytest.raises(TypeError, match="fixed intervals"):
        Scheduler({"odd": {"task": "x", "schedule": "every tuesday"}})


SERVING = {"RUN_MAIN": "true"}


@pytest.mark.parametrize(
    ("overrides", "argv", "environ", "wanted"),
    [
        ({}, ["manage.py", "runserver", "127.0.0.1:8011"], SERVING, True),
        ({}, ["manage.py", "runserver", "--noreload"], {}, True),
        # The autoreloader's watching process does not serve.
        ({}, ["manage.py", "runserver"], {}, False),
        ({}, ["manage.py", "migrate"], SERVING, False),
        ({"DEMO_SCHEDULER": False}, ["manage.py", "runserver"], SERVING, False),
        # With a broker, Celery beat runs the schedule.
        ({"CELERY_TASK_ALWAYS_EAGER": False}, ["manage.py", "runserver"], SERVING, False),
    ],
)
def test_the_thread_runs_only_in_the_demo_server(overrides, argv, environ, wanted):
    settings_for_demo = {"DEMO_SCHEDULER": True, "CELERY_TASK_ALWAYS_EAGER": True, **overrides}
    with override_settings(**settings_for_demo):
        assert is_wanted(argv, environ) is wanted


@pytest.mark.django_db(transaction=True)
def test_the_thread_runs_the_tasks_until_stopped(idle_session):
    # A real thread with its own database connection, as in runserver.
    stop = threading.Event()
    thread = threading.Thread(
        target=Scheduler(settings.CELERY_BEAT_SCHEDULE).run_forever, args=(stop, 0.01)
    )
    thread.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            idle_session.refresh_from_db()
            if idle_session.step == Step.ABANDONED:
                break
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=10)

    assert idle_session.step == Step.ABANDONED
    assert not thread.is_alive()
