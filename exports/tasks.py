"""Export and report jobs (Celery)."""

from celery import shared_task


@shared_task(name="exports.tasks.resume_stalled_jobs")
def resume_stalled_jobs() -> int:
    """Placeholder until export jobs exist: nothing can stall yet."""
    return 0


@shared_task(name="exports.tasks.delete_expired_files")
def delete_expired_files() -> int:
    """Placeholder until export jobs exist: nothing can expire yet."""
    return 0
