"""One run of an export job, safe to repeat.

A task can arrive twice (Redis redelivers an unacknowledged task after its
worker died, and the stalled-job sweep re-queues it too), so a run first
claims the job under a row lock: a finished job is left alone, a job whose
heartbeat is fresh belongs to a live worker, anything else is taken over as
a new attempt. The file is written under a temporary name and renamed into
place in one atomic step, so whichever attempt finishes, exactly one
complete file exists and no reader ever sees half of one.

Each attempt works in a folder of its own beside the final file
(`<token>.<ext>.<attempt>.tmp/`): the file being written and the writer's
working files (the workbook's sheets) live there, and nowhere else. A run
that fails removes its folder; the folder of a run that was killed is
removed by the job's next run or, if there is none, by the stale-export
sweep (services.export_files_delete_expired). Neither touches the folder of
a job that is queued or running.
"""

import enum
import logging
import os
import shutil
from datetime import timedelta
from pathlib import Path
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from exports.models import ExportEvent, ExportJob
from exports.progress import Progress
from surveys.erasure_lock import reading_study_data

logger = logging.getLogger(__name__)

Status = ExportJob.Status


class Outcome(enum.StrEnum):
    """What one run did (the task's result)."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"  # the job had finished already
    BUSY = "busy"  # a live worker is on it
    MISSING = "missing"  # no such job (deleted meanwhile)
    SUPERSEDED = "superseded"  # another attempt took it over


class Claim(NamedTuple):
    """The job, taken by this run as attempt number `attempt`."""

    job: ExportJob
    attempt: int


class NotClaimed(Exception):
    """The job is not this run's to do; `outcome` says why."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome)
        self.outcome = outcome


class Superseded(Exception):
    """Another attempt took the job over; this one must stop without touching it."""


def export_job_run(*, job_id: int) -> Outcome:
    """Run the job once if it still needs running; return what happened."""
    try:
        claim = _claim(job_id)
    except NotClaimed as refusal:
        return refusal.outcome
    job, attempt = claim
    final = Path(settings.PRIVATE_STORAGE_ROOT) / job.relative_path
    work = final.with_name(f"{final.name}.{attempt}.tmp")
    temporary = work / final.name
    ticker = _Ticker(job.pk, attempt)
    report_data = None
    try:
        _remove_leftovers(final)
        work.mkdir(parents=True)
        progress = Progress(ticker)
        report_data = _produce(job, temporary, progress)
        progress.finish()
        _flush(temporary)
        ticker.check()
        os.replace(temporary, final)
    except Superseded:
        _discard(work)
        return Outcome.SUPERSEDED
    except Exception as error:
        logger.exception("export job %s (attempt %s) failed", job.pk, attempt)
        _discard(work)
        return _fail(job.pk, attempt, readable_error(error))
    _discard(work)
    return _succeed(job.pk, attempt, final, report_data)


def _produce(job: ExportJob, path: Path, progress: Progress) -> dict | None:
    """Write the job's file; a report also returns what its page shows."""
    # A participant's data deleted meanwhile is either wholly in the file or not at all.
    with reading_study_data(job.study_id):
        return _write(job, path, progress)


def _write(job: ExportJob, path: Path, progress: Progress) -> dict | None:
    if job.is_report:
        from exports.report.build import write_report

        return write_report(study=job.study, path=path, progress=progress, language=job.language)
    if job.format == ExportJob.Format.REPLICATION:
        from exports.replication.package import write_replication

        write_replication(
            study=job.study,
            path=path,
            progress=progress,
            include_free_text=job.include_free_text,
            language=job.language,
        )
        return None
    from exports.dataset import build_dataset
    from exports.writers import writer_for

    dataset = build_dataset(
        study=job.study,
        include_pilot=job.include_pilot,
        include_free_text=job.include_free_text,
    )
    writer = writer_for(job.format)
    progress.expect(writer.total_rows(dataset))
    writer.write(dataset, path, progress)
    return None


def _claim(job_id: int) -> Claim:
    """Take the job as a new attempt, or raise NotClaimed saying why not."""
    with transaction.atomic():
        locked = ExportJob.objects.select_for_update(of=("self",)).select_related("study")
        job = locked.filter(pk=job_id).first()
        refusal = _refusal(job)
        if refusal is None:
            return _start_attempt(job)
        if refusal == Outcome.FAILED:
            _mark_failed(
                job,
                f"The export was interrupted {job.attempts} times without finishing "
                "(its worker stopped each time) and was given up. Start a new export; if this "
                "happens again, ask the platform administrator to check the workers.",
            )
    # Raised once the transaction is committed: giving the job up must stick.
    raise NotClaimed(refusal)


def _refusal(job: ExportJob | None) -> Outcome | None:
    """Why this run must not take the (locked) job, or None if it may."""
    if job is None:
        return Outcome.MISSING
    if job.is_finished:
        return Outcome.SKIPPED
    if job.status == Status.RUNNING and _alive(job, timezone.now()):
        return Outcome.BUSY
    if job.attempts >= settings.EXPORT_MAX_ATTEMPTS:
        return Outcome.FAILED  # given up
    return None


def _start_attempt(job: ExportJob) -> Claim:
    now = timezone.now()
    restarted = job.attempts > 0
    job.attempts += 1
    job.status = Status.RUNNING
    job.progress = 0
    job.error_message = ""
    job.started_at = job.started_at or now
    job.heartbeat_at = now
    fields = ["attempts", "status", "progress", "error_message", "started_at", "heartbeat_at"]
    job.save(update_fields=fields)
    ExportEvent.objects.create(
        job=job,
        kind=ExportEvent.Kind.STARTED,
        attempt=job.attempts,
        message="restarted after an earlier run stopped without finishing" if restarted else "",
    )
    return Claim(job, job.attempts)


def _alive(job: ExportJob, now) -> bool:
    # Progress ticks refresh the heartbeat at least 20 times per run; the longest
    # silent stretch is openpyxl zipping the finished workbook (seconds, not minutes).
    stale_after = timedelta(seconds=settings.EXPORT_STALE_AFTER_SECONDS)
    return job.heartbeat_at is not None and job.heartbeat_at > now - stale_after


class _Ticker:
    """Progress writes, which double as the heartbeat and the takeover check."""

    def __init__(self, job_id: int, attempt: int):
        self.job_id, self.attempt = job_id, attempt

    def __call__(self, percent: int) -> None:
        self._update(progress=percent)

    def check(self) -> None:
        self._update()

    def _update(self, **fields) -> None:
        updated = ExportJob.objects.filter(
            pk=self.job_id, attempts=self.attempt, status=Status.RUNNING
        ).update(heartbeat_at=timezone.now(), **fields)
        if not updated:
            raise Superseded


def _remove_leftovers(final: Path) -> None:
    """The folders of earlier attempts of this job that died half-way (this run
    took the job over, so they are no longer running)."""
    if final.parent.is_dir():
        for leftover in final.parent.glob(f"{final.name}.*.tmp"):
            remove_temporary(leftover)


def remove_temporary(path: Path) -> None:
    """Remove a run's folder (or a temporary file of an older version)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _discard(path: Path) -> None:
    """Remove a run's folder, whatever state the storage is in (we are cleaning up)."""
    try:
        remove_temporary(path)
    except OSError:
        logger.warning("could not remove %s", path, exc_info=True)


def _flush(path: Path) -> None:
    # The rename must not reach the disk before the file's content does.
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _locked_attempt(job_id: int, attempt: int) -> ExportJob | None:
    job = ExportJob.objects.select_for_update().filter(pk=job_id).first()
    if job is None or job.attempts != attempt or job.status != Status.RUNNING:
        return None
    return job


def _succeed(job_id: int, attempt: int, final: Path, report_data: dict | None) -> Outcome:
    with transaction.atomic():
        job = _locked_attempt(job_id, attempt)
        if job is None:
            return Outcome.SUPERSEDED
        now = timezone.now()
        job.status = Status.SUCCEEDED
        job.progress = 100
        job.file_path = job.relative_path
        job.file_size = final.stat().st_size
        job.report_data = report_data
        job.finished_at = now
        job.heartbeat_at = now
        job.expires_at = now + timedelta(days=settings.EXPORT_RETENTION_DAYS)
        job.save()
        ExportEvent.objects.create(job=job, kind=ExportEvent.Kind.SUCCEEDED, attempt=attempt)
    return Outcome.SUCCEEDED


def _fail(job_id: int, attempt: int, message: str) -> Outcome:
    with transaction.atomic():
        job = _locked_attempt(job_id, attempt)
        if job is None:
            return Outcome.SUPERSEDED
        _mark_failed(job, message)
    return Outcome.FAILED


def _mark_failed(job: ExportJob, message: str) -> None:
    job.status = Status.FAILED
    job.error_message = message
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "error_message", "finished_at"])
    ExportEvent.objects.create(
        job=job, kind=ExportEvent.Kind.FAILED, attempt=job.attempts, message=message
    )


def readable_error(error: Exception) -> str:
    """What a coordinator reads on the job page (the traceback goes to the log)."""
    from exports.writers.jsonlines import FreeTextRequired
    from exports.writers.spss import SpssUnavailable

    if isinstance(error, SpssUnavailable | FreeTextRequired):
        return str(error)
    if isinstance(error, OSError):
        reason = error.strerror or str(error)
        return (
            f"The export file could not be written to the private storage folder ({reason}). "
            "Ask the platform administrator to check PRIVATE_STORAGE_ROOT, then start the "
            "export again."
        )
    return (
        f"The export stopped with an unexpected error ({type(error).__name__}: {error}). "
        "Start it again; if it fails again, report it to the platform administrator."
    )
