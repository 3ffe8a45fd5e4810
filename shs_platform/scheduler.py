"""The periodic tasks of the Celery beat schedule, run in-process for the demo.

`make run` has no broker and so no beat: without this, sessions would never
be marked abandoned, stalled exports never resumed and expired export files
never deleted. A daemon thread of the runserver process runs the same
CELERY_BEAT_SCHEDULE entries, each at its own interval. Production runs
Celery beat instead (`make worker`, the compose file), so the thread starts
only with DEMO_SCHEDULER on and no broker configured.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from datetime import timedelta

from django.conf import settings
from django.db import close_old_connections

logger = logging.getLogger(__name__)

# How often the thread looks for due tasks; the shortest interval is a minute.
TICK_SECONDS = 5.0


def _run_task(name: str) -> None:
    from shs_platform.celery import app

    # A worker imports the apps' tasks modules at start; this process must too.
    app.loader.import_default_modules()
    # apply() runs the task here and now, with or without a broker.
    app.tasks[name].apply(throw=True)


def _seconds(every: object) -> float:
    if isinstance(every, timedelta):
        return every.total_seconds()
    if isinstance(every, int | float):
        return float(every)
    raise TypeError(f"the demo scheduler runs fixed intervals only, not {every!r}")


class Scheduler:
    """Runs each entry of a beat schedule when its interval has passed.

    Every task runs once at start (the demo may have been down for hours),
    then every `schedule` seconds. The clock and the runner are injectable so
    tests need not wait real minutes.
    """

    def __init__(
        self,
        schedule: Mapping[str, Mapping],
        *,
        clock: Callable[[], float] = time.monotonic,
        run: Callable[[str], None] = _run_task,
    ):
        self.intervals = {entry["task"]: _seconds(entry["schedule"]) for entry in schedule.values()}
        self.clock = clock
        self.run = run
        self.next_due = dict.fromkeys(self.intervals, clock())

    def run_due(self) -> list[str]:
        """Run the tasks that are due; return the names of those that succeeded."""
        now = self.clock()
        ran = []
        for task, interval in self.intervals.items():
            if now < self.next_due[task]:
                continue
            self.next_due[task] = now + interval
            try:
                self.run(task)
            except Exception:  # one failing task must not stop the others
                logger.exception("periodic task %s failed", task)
            else:
                ran.append(task)
        return ran

    def run_forever(self, stop: threading.Event, tick: float = TICK_SECONDS) -> None:
        while True:
            self.run_due()
            # As after a request: the thread keeps no stale connection between rounds.
            close_old_connections()
            if stop.wait(tick):
                return


_started = threading.Event()


def is_wanted(argv: list[str] | None = None, environ: Mapping[str, str] | None = None) -> bool:
    """Only runserver's serving process of a demo without a broker runs the tasks.

    With the autoreloader, runserver's outer process only watches files and
    restarts the inner one (RUN_MAIN=true), which serves; management commands,
    tests and production processes never start the thread.
    """
    argv = sys.argv if argv is None else argv
    environ = os.environ if environ is None else environ
    if not (settings.DEMO_SCHEDULER and settings.CELERY_TASK_ALWAYS_EAGER):
        return False
    if "runserver" not in argv[1:2]:
        return False
    return environ.get("RUN_MAIN") == "true" or "--noreload" in argv


def start_if_wanted() -> threading.Thread | None:
    if not is_wanted() or _started.is_set():
        return None
    _started.set()
    scheduler = Scheduler(settings.CELERY_BEAT_SCHEDULE)
    thread = threading.Thread(
        target=scheduler.run_forever,
        args=(threading.Event(),),
        name="demo-scheduler",
        daemon=True,
    )
    thread.start()
    logger.info("demo scheduler started: %s", ", ".join(scheduler.intervals))
    return thread
