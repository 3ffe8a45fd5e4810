"""Celery tasks of the exports: the beat's sweeps, thin wrappers that call
services. The task that runs one job is exports.dispatch, below the services
that queue it; imported here so that a worker, which loads each app's tasks
module, knows it."""

from exports.dispatch import run_export_job  # noqa: F401  (registers it with the worker)
from exports.services import export_files_delete_expired, export_jobs_resume_stalled
from shs_platform.celery import app


@app.task(name="exports.tasks.resume_stalled_jobs")
def resume_stalled_jobs() -> int:
    """Beat: re-queue jobs left running by a dead worker or never picked up."""
    return export_jobs_resume_stalled()


@app.task(name="exports.tasks.delete_expired_files")
def delete_expired_files() -> int:
    """Beat: delete export files past their expiry date."""
    return export_files_delete_expired()
