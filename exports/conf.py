"""Export settings, with defaults, read at call time (tests override them).

EXPORT_STALE_AFTER_SECONDS  a running job whose heartbeat is older lost its worker
EXPORT_MAX_ATTEMPTS         runs of one job before it is given up as failed
EXPORT_TICK_DELAY_SECONDS   test hook: pause at each progress tick (0 in production)
"""

from datetime import timedelta
from pathlib import Path

from django.conf import settings


def storage_root() -> Path:
    return Path(settings.PRIVATE_STORAGE_ROOT)


def retention() -> timedelta:
    return timedelta(days=settings.EXPORT_RETENTION_DAYS)


def stale_after() -> timedelta:
    # Progress ticks refresh the heartbeat at least 20 times per run; the longest
    # silent stretch is openpyxl zipping the finished workbook (seconds, not minutes).
    return timedelta(seconds=getattr(settings, "EXPORT_STALE_AFTER_SECONDS", 300))


def max_attempts() -> int:
    return getattr(settings, "EXPORT_MAX_ATTEMPTS", 3)


def tick_delay() -> float:
    return float(getattr(settings, "EXPORT_TICK_DELAY_SECONDS", 0))
