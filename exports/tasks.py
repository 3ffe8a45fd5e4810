"""Celery tasks of the exports: thin wrappers that take ids and call services."""

from shs_platform.celery import app


@app.task(name="exports.tasks.run_export_job", bind=True, max_retries=5)
def run_export_job(self, job_id: int) -> str:
    from django.conf import settings

    from exports.runner import Outcome, export_job_run

    outcome = export_job_run(job_id=job_id)
    if outcome == Outcome.BUSY and not self.request.is_eager:
        # Another worker is still on this job (a duplicate delivery). Look again
        # once its heartbeat would have gone stale: by then it finished or died.
        raise self.retry(countdown=settings.EXPORT_STALE_AFTER_SECONDS)
    return outcome


@app.task(name="exports.tasks.resume_stalled_jobs")
def resume_stalled_jobs() -> int:
    """Beat: re-queue jobs left running by a dead worker or never picked up."""
    from exports.services import export_jobs_resume_stalled

    return export_jobs_resume_stalled()


@app.task(name="exports.tasks.delete_expired_files")
def delete_expired_files() -> int:
    """Beat: delete export files past their expiry date."""
    from exports.services import export_files_delete_expired

    return export_files_delete_expired()
