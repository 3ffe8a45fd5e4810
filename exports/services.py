"""Export jobs: creating them, and the periodic sweeps that keep them moving
and clean up after them. Sending a job to the workers is exports.dispatch;
running it once is exports.runner."""

from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone, translation

from audit.log import record
from audit.models import AuditEntry
from exports.dispatch import export_job_dispatch
from exports.models import ExportEvent, ExportJob
from exports.runner import remove_temporary
from surveys.models import Study

Status = ExportJob.Status


def export_job_create(
    *,
    study: Study,
    requested_by,
    fmt: str,
    include_pilot: bool = False,
    include_free_text: bool = False,
    dispatch: bool = True,
    note: str = "",
) -> ExportJob:
    """Record the request and queue the task once the row is committed.

    `dispatch=False` leaves the queue alone, for a caller that runs the job in
    its own process (the export_study command).
    """
    if fmt not in ExportJob.Format.values:
        raise ValueError(f"unknown export format {fmt!r}")
    if fmt in ExportJob.FREE_TEXT_FORMATS and not include_free_text:
        raise ValueError(f"the {fmt} export is free text as a whole: it needs free text included")
    is_report = fmt == ExportJob.Format.REPORT
    with transaction.atomic():
        job = ExportJob.objects.create(
            study=study,
            requested_by=requested_by,
            format=fmt,
            # The report is always over the non-pilot sample and shows counts only.
            include_pilot=include_pilot and fmt not in ExportJob.NON_PILOT_FORMATS,
            include_free_text=include_free_text and not is_report,
            language=translation.get_language() or "en",
        )
        ExportEvent.objects.create(
            job=job, kind=ExportEvent.Kind.QUEUED, actor=requested_by, message=note
        )
        _audit_created(job)
        if dispatch:
            export_job_dispatch(job.pk)
    return job


def _audit_created(job: ExportJob) -> None:
    """The request in the study's audit log (the note is free text: not there)."""
    is_report = job.format == ExportJob.Format.REPORT
    record(
        AuditEntry.Kind.REPORT_CREATED if is_report else AuditEntry.Kind.EXPORT_CREATED,
        actor=job.requested_by,
        study_id=job.study_id,
        target=f"{'report' if is_report else 'export'} {job.pk}",
        details={
            "format": job.format,
            "include_pilot": job.include_pilot,
            "include_free_text": job.include_free_text,
        },
    )


def latest_report(study: Study) -> ExportJob | None:
    """The study's newest report that succeeded and has not expired: what the
    report page and the API's report show."""
    return (
        study.export_jobs.filter(
            format=ExportJob.Format.REPORT,
            status=Status.SUCCEEDED,
            expires_at__gt=timezone.now(),
        )
        .order_by("-finished_at")
        .first()
    )


def export_job_file(job: ExportJob) -> Path | None:
    """The finished job's file to serve, or None when it is gone. The path
    comes from our own row, but nothing outside private storage is ever served."""
    if job.absolute_path is None:
        return None
    path = job.absolute_path.resolve()
    if not path.is_relative_to(Path(settings.PRIVATE_STORAGE_ROOT).resolve()) or not path.is_file():
        return None
    return path


def export_job_download_record(*, job: ExportJob, user) -> None:
    """A download of the job's file: the job's own event and the study's audit
    row, both or neither. The page and the API both call this, so a download
    leaves the same rows whichever way it was made."""
    is_report = job.format == ExportJob.Format.REPORT
    with transaction.atomic():
        ExportEvent.objects.create(
            job=job, kind=ExportEvent.Kind.DOWNLOADED, actor=user, attempt=job.attempts
        )
        record(
            AuditEntry.Kind.REPORT_DOWNLOADED if is_report else AuditEntry.Kind.EXPORT_DOWNLOADED,
            actor=user,
            study_id=job.study_id,
            target=f"{'report' if is_report else 'export'} {job.pk}",
            details={"format": job.format, "attempt": job.attempts},
        )


def export_jobs_resume_stalled() -> int:
    """Re-queue jobs whose worker died mid-run and jobs that were never picked up."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.EXPORT_STALE_AFTER_SECONDS)
    # A claimed run always sets its heartbeat, so NULL cannot mean a lost worker.
    stalled = ExportJob.objects.filter(
        Q(status=Status.RUNNING, heartbeat_at__lt=cutoff)
        | Q(status=Status.QUEUED, queued_at__lt=cutoff)
    )
    resumed = 0
    for job_id in list(stalled.values_list("pk", flat=True)):
        with transaction.atomic():
            # Checked again under the lock: a worker may have moved it on meanwhile.
            job = stalled.select_for_update().filter(pk=job_id).first()
            if job is None:
                continue
            if job.status == Status.RUNNING:
                message = (
                    "the worker stopped responding (last heartbeat "
                    f"{job.heartbeat_at.isoformat(timespec='seconds')})"
                )
            else:
                message = "not picked up by a worker; sent to the queue again"
            job.status = Status.QUEUED
            job.queued_at = now
            job.save(update_fields=["status", "queued_at"])
            ExportEvent.objects.create(
                job=job, kind=ExportEvent.Kind.REQUEUED, attempt=job.attempts, message=message
            )
            export_job_dispatch(job.pk)
            resumed += 1
    return resumed


def export_files_delete_expired() -> int:
    """Delete files past their expiry, and files no job accounts for any more."""
    now = timezone.now()
    expired = 0
    for job_id in list(
        ExportJob.objects.filter(status=Status.SUCCEEDED, expires_at__lte=now).values_list(
            "pk", flat=True
        )
    ):
        with transaction.atomic():
            job = ExportJob.objects.select_for_update().filter(pk=job_id).first()
            if job is None or job.status != Status.SUCCEEDED:
                continue
            if job.absolute_path is not None:
                job.absolute_path.unlink(missing_ok=True)
            job.status = Status.EXPIRED
            job.file_path = ""
            job.report_data = None
            job.save(update_fields=["status", "file_path", "report_data"])
            ExportEvent.objects.create(job=job, kind=ExportEvent.Kind.EXPIRED, attempt=job.attempts)
            expired += 1
    _delete_orphans(now)
    return expired


def _delete_orphans(now) -> None:
    """Files of deleted jobs (e.g. of a deleted study) and the folders of runs
    that died (exports.runner). What changed within the stale limit may still
    be in use."""
    folder = Path(settings.PRIVATE_STORAGE_ROOT) / "exports"
    if not folder.is_dir():
        return
    status_of = dict(
        ExportJob.objects.filter(
            status__in=[Status.QUEUED, Status.RUNNING, Status.SUCCEEDED]
        ).values_list("token", "status")
    )
    old = (now - timedelta(seconds=settings.EXPORT_STALE_AFTER_SECONDS)).timestamp()
    for path in folder.glob("study-*/*"):
        if _last_change(path) >= old:
            continue
        token = path.name.split(".", 1)[0]
        if path.name.endswith(".tmp"):
            # A queued or running job clears its own leftovers when it runs.
            keep = status_of.get(token) in (Status.QUEUED, Status.RUNNING)
        else:
            keep = token in status_of or not path.is_file()
        if not keep:
            remove_temporary(path)


def _last_change(path) -> float:
    """When a file, or anything in a run's folder, was last written."""
    try:
        times = [path.stat().st_mtime]
        if path.is_dir():
            times += [part.stat().st_mtime for part in path.iterdir()]
    except OSError:  # removed meanwhile, by the run that owned it
        return float("inf")
    return max(times)
