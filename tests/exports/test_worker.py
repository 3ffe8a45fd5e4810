"""Reliability with a real worker and Redis: a worker killed with SIGKILL in
the middle of an export, and an export that fails."""

import time
from pathlib import Path

import pytest

from exports.models import ExportJob
from exports.services import export_files_delete_expired, export_job_create
from tests.exports.factories import populate_study
from tests.exports.readers import read_xlsx, sheet_dicts
from tests.services import database_is_postgres, redis_available, require_services
from tests.worker import WorkerProcess

pytestmark = pytest.mark.services
VISIBILITY_TIMEOUT = 4


@pytest.fixture
def start_worker(tasks_run_in_process, transactional_db, tmp_path, settings):
    """start_worker(**env) -> a running worker with the export test settings."""
    if not (database_is_postgres() and redis_available()):
        if require_services():
            pytest.fail("a real worker needs PostgreSQL and Redis")
        pytest.skip("needs DATABASE_URL=postgres://... and REDIS_URL (runs in CI)")
    from shs_platform.celery import app

    app.conf.task_always_eager = False  # publish to Redis, for the worker
    workers = []

    def start(**env) -> WorkerProcess:
        worker = WorkerProcess(
            tmp_path / f"worker-logs-{len(workers)}",
            {
                "DJANGO_SETTINGS_MODULE": "tests.exports.worker_settings",
                "PRIVATE_STORAGE_ROOT": str(settings.PRIVATE_STORAGE_ROOT),
                "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT),
                **env,
            },
        )
        worker.log_dir.mkdir()
        workers.append(worker)
        worker.start()
        return worker

    yield start
    for worker in workers:
        worker.stop()


def wait_for(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _sheet_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob("openpyxl.*")) + sorted(folder.rglob("sheet*.xml"))


def _kill_half_way(worker, job) -> None:
    """Kill the worker while the job is visibly half-way."""

    def half_way():
        job.refresh_from_db()
        return job.status == "running" and 0 < job.progress < 100 and job.progress >= 20

    wait_for(half_way, 60, "the job to make progress")
    worker.kill()
    job.refresh_from_db()
    assert job.status == "running" and job.progress < 100


def _wait_until_finished(job, worker) -> None:
    def finished():
        job.refresh_from_db()
        return job.is_finished

    wait_for(finished, 90, "the job to finish after the restart\n" + worker.log_text())


def test_an_export_whose_worker_is_killed_completes_after_a_restart(
    personas, study_a, start_worker, private_storage, tmp_path
):
    populate_study(study_a, sessions=20)
    # The system's temporary folder of the workers: nothing of an export goes there.
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    worker = start_worker(TMPDIR=str(system_tmp))
    job = export_job_create(study=study_a, requested_by=personas["coordinator_a"], fmt="xlsx")
    folder = private_storage / "exports" / f"study-{study_a.pk}"

    _kill_half_way(worker, job)
    # The killed run's sheet files are in its own folder, where a run looks for them.
    assert [p.parent.name for p in _sheet_files(folder)] == [f"{job.token}.xlsx.1.tmp"] * 8
    assert _sheet_files(system_tmp) == []

    # Redis hands the unacknowledged task back once its visibility timeout passed.
    time.sleep(VISIBILITY_TIMEOUT)
    restarted = start_worker(TMPDIR=str(system_tmp))
    _wait_until_finished(job, restarted)

    assert job.status == ExportJob.Status.SUCCEEDED, job.error_message
    assert job.attempts == 2
    assert sorted(p.name for p in folder.iterdir()) == [f"{job.token}.xlsx"]
    assert _sheet_files(folder) + _sheet_files(system_tmp) == []
    assert len(sheet_dicts(read_xlsx(job.absolute_path)["Evaluations"])) == 41
    kinds = list(job.events.values_list("kind", "attempt"))
    assert kinds == [("queued", 0), ("started", 1), ("started", 2), ("succeeded", 2)]


def test_the_sweep_removes_what_a_killed_export_left_when_it_is_given_up(
    personas, study_a, start_worker, private_storage, tmp_path, settings
):
    populate_study(study_a, sessions=20)
    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    worker = start_worker(TMPDIR=str(system_tmp))
    job = export_job_create(study=study_a, requested_by=personas["coordinator_a"], fmt="xlsx")
    folder = private_storage / "exports" / f"study-{study_a.pk}"
    _kill_half_way(worker, job)
    assert len(_sheet_files(folder)) == 8

    # The redelivered task finds the job out of attempts: no run will clear the folder.
    time.sleep(VISIBILITY_TIMEOUT)
    restarted = start_worker(TMPDIR=str(system_tmp), EXPORT_MAX_ATTEMPTS="1")
    _wait_until_finished(job, restarted)
    assert job.status == ExportJob.Status.FAILED
    assert len(_sheet_files(folder)) == 8

    settings.EXPORT_STALE_AFTER_SECONDS = 0
    export_files_delete_expired()

    assert list(folder.iterdir()) == []
    assert _sheet_files(system_tmp) == []


def test_an_export_that_fails_in_the_worker_ends_failed_with_a_message(
    personas, study_a, start_worker, tmp_path
):
    populate_study(study_a, sessions=2)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    start_worker(PRIVATE_STORAGE_ROOT=str(blocker / "private"), EXPORT_TICK_DELAY_SECONDS="0")

    job = export_job_create(study=study_a, requested_by=personas["coordinator_a"], fmt="csv")

    def finished():
        job.refresh_from_db()
        return job.is_finished

    wait_for(finished, 60, "the job to finish")
    assert job.status == ExportJob.Status.FAILED
    assert "could not be written to the private storage folder" in job.error_message
    assert list(job.events.values_list("kind", flat=True)) == ["queued", "started", "failed"]
