"""Deleting a participant's data and reading a study for an export or report
never overlap.

An export reads its tables one after another: data deleted between two of
those reads would be half in the file (the evaluations, say, without their
session). So whatever reads a study's data holds a shared PostgreSQL advisory
lock on the study while it reads, and a deletion takes the same lock
exclusively inside its transaction: it waits for the readers running, and
readers that start later wait for it and see the data gone. The wait is the
length of one export, seconds even for a large study.

SQLite (the demo, tasks in-process) has no concurrent workers: nothing is locked.
"""

from contextlib import contextmanager

from django.conf import settings
from django.db import OperationalError, connection

# The advisory lock space is shared by everything using the database: the
# first key marks this platform's per-study locks, the second is the study.
_STUDY_DATA = 0x5348


def _postgres() -> bool:
    return connection.vendor == "postgresql"


@contextmanager
def reading_study_data(study_id: int):
    """Hold off deletions of the study's participant data while reading it."""
    if not _postgres():
        yield
        return
    # A session-level lock: the reader commits progress as it goes, so it
    # cannot hold one transaction open. A dead worker's lock goes with its connection.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock_shared(%s, %s)", [_STUDY_DATA, study_id])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock_shared(%s, %s)", [_STUDY_DATA, study_id])


class StudyBeingRead(Exception):
    """An export or report kept reading the study longer than a deletion may wait."""


def wait_for_study_readers(study_id: int) -> None:
    """Inside a deletion's transaction: wait until no export or report reads the
    study; raise StudyBeingRead after DELETION_WAIT_SECONDS (a stuck export must
    not hang the request), which rolls the deletion back."""
    if not _postgres():
        return
    with connection.cursor() as cursor:
        # For the rest of this transaction only; the row locks after it wait as long.
        cursor.execute(f"SET LOCAL lock_timeout = '{int(settings.DELETION_WAIT_SECONDS)}s'")
        try:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_STUDY_DATA, study_id])
        except OperationalError as error:  # lock_timeout: psycopg's LockNotAvailable
            raise StudyBeingRead from error
