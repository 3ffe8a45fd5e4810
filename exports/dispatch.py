"""Sending an export job to the workers: the task that runs it once
(exports.runner), and its dispatch after the request's transaction commits.

Below exports.services, which create and re-queue jobs through here, and
below the beat's sweeps (exports.tasks): the task keeps the name it had in
exports.tasks, so that jobs queued before it moved here still run.
"""

import logging

from django.conf import settings
from django.db import transaction

from exports.runner import Outcome, export_job_run
from shs_platform.celery import app

logger = logging.getLogger(__name__)


@app.task(name="exports.tasks.run_export_job", bind=True, max_retries=5)
def run_export_job(self, job_id: int) -> str:
    outcome = export_job_run(job_id=job_id)
    if outcome == Outcome.BUSY and not self.request.is_eager:
        # Another worker is still on this job (a duplicate delivery). Look again
        # once its heartbeat would have gone stale: by then it finished or died.
        raise self.retry(countdown=settings.EXPORT_STALE_AFTER_SECONDS)
    return outcome


def export_job_dispatch(job_id: int) -> None:
    """Send the job to the workers after the current transaction commits.

    If the broker cannot be reached the request still succeeds: the job stays
    queued and the stalled-job sweep sends it again.
    """

    def enqueue():
        try:
            run_export_job.delay(job_id)
        except Exception:
            logger.warning("could not queue export job %s; the sweep will", job_id, exc_info=True)

    transaction.on_commit(enqueue)
