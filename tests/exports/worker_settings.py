"""Settings of the real worker the reliability tests start (a subprocess).

The platform's settings, plus what makes a kill mid-job deterministic: each
progress tick pauses, a stale heartbeat is noticed after seconds rather than
minutes, and Redis hands an unacknowledged task back quickly.
"""

import os
import time

from celery.signals import worker_ready

from shs_platform.settings import *  # noqa: F403
from shs_platform.settings import CELERY_BROKER_TRANSPORT_OPTIONS

EXPORT_STALE_AFTER_SECONDS = int(os.environ.get("EXPORT_STALE_AFTER_SECONDS", "3"))
CELERY_BROKER_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,
    # Look for unacknowledged tasks of dead workers every second, not every 100.
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}

# Seconds each progress tick of an export pauses in this worker, so that a test
# can watch it half-way (or kill it there).
TICK_DELAY = float(os.environ.get("EXPORT_TICK_DELAY_SECONDS", "0.3"))


@worker_ready.connect
def _pause_at_each_progress_tick(**kwargs) -> None:
    # The tests start the worker with --pool=solo: tasks run in this process.
    from exports.runner import _Ticker

    tick = _Ticker.__call__

    def paused(self, percent: int) -> None:
        time.sleep(TICK_DELAY)
        tick(self, percent)

    if TICK_DELAY:
        _Ticker.__call__ = paused
