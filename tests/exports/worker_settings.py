"""Settings of the real worker the reliability tests start (a subprocess).

The platform's settings, plus what makes a kill mid-job deterministic: each
progress tick pauses, a stale heartbeat is noticed after seconds rather than
minutes, and Redis hands an unacknowledged task back quickly.
"""

import os

from shs_platform.settings import *  # noqa: F403
from shs_platform.settings import CELERY_BROKER_TRANSPORT_OPTIONS

EXPORT_TICK_DELAY_SECONDS = float(os.environ.get("EXPORT_TICK_DELAY_SECONDS", "0.3"))
EXPORT_STALE_AFTER_SECONDS = int(os.environ.get("EXPORT_STALE_AFTER_SECONDS", "3"))
CELERY_BROKER_TRANSPORT_OPTIONS = {
    **CELERY_BROKER_TRANSPORT_OPTIONS,
    # Look for unacknowledged tasks of dead workers every second, not every 100.
    "unacked_restore_interval": 1,
    "unacked_restore_throttle": 1,
}
