"""The life of an export job: idempotent runs, one file, progress, failure,
stalled jobs picked up again, expiry."""

import os
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from exports import runner
from exports.models import ExportEvent, ExportJob
from exports.progress import TICKS, Progress
from exports.services import (
    export_files_delete_expired,
    export_job_create,
    export_jobs_resume_stalled,
)
from exports.tasks import delete_expired_files, resume_stalled_jobs

Status = ExportJob.Status


def files_of(job: ExportJob, root: Path) -> list[str]:
    folder = root / "exports" / f"study-{job.study_id}"
    return sorted(path.name for path in folder.iterdir()) if folder.exists() else []


def kinds(job: ExportJob) -> list[str]:
    return list(job.events.values_list("kind", flat=True))


def queued_job(study, user, fmt="csv") -> ExportJob:
    # Created without dispatch (no on_commit capture): the test runs it by hand.
    return export_job_create(study=study, requested_by=user, fmt=fmt)


def test_a_job_runs_to_success_with_an_audit_trail(populated, run_export, private_storage):
    job = run_export(populated.study, "xlsx")

    assert job.status == Status.SUCCEEDED
    assert job.progress == 100
    assert job.attempts == 1
    assert job.file_path == f"exports/study-{job.study_id}/{job.token}.xlsx"
    assert job.absolute_path.stat().st_size == job.file_size > 0
    assert job.expires_at == job.finished_at + timedelta(days=7)
    assert kinds(job) == ["queued", "started", "succeeded"]
    assert files_of(job, private_storage) == [f"{job.token}.xlsx"]
    # Never under a URL-served folder.
    assert "static" not in str(job.absolute_path) and "media" not in str(job.absolute_path)


def test_a_redelivered_task_for_a_finished_job_does_nothing(populated, run_export, private_storage):
    job = run_export(populated.study, "csv")
    content = job.absolute_path.read_bytes()

    outcome = runner.export_job_run(job_id=job.pk)

    assert outcome == runner.Outcome.SKIPPED
    job.refresh_from_db()
    assert job.attempts == 1
    assert job.absolute_path.read_bytes() == content
    assert kinds(job) == ["queued", "started", "succeeded"]
    assert files_of(job, private_storage) == [f"{job.token}.csv"]


def test_a_run_left_behind_by_a_dead_worker_is_taken_over(populated, personas, private_storage):
    # Given a job whose worker died half-way: running, old heartbeat, a half-written temp file.
    job = queued_job(populated.study, personas["coordinator_a"])
    long_ago = timezone.now() - timedelta(hours=1)
    ExportJob.objects.filter(pk=job.pk).update(
        status=Status.RUNNING, attempts=1, heartbeat_at=long_ago, started_at=long_ago, progress=40
    )
    folder = private_storage / "exports" / f"study-{job.study_id}"
    folder.mkdir(parents=True)
    (folder / f"{job.token}.csv.1.tmp").write_text("evaluation_id,participant_id\n1,")

    # When the task is delivered again
    outcome = runner.export_job_run(job_id=job.pk)

    # Then a second attempt finishes it, and exactly one complete file exists.
    job.refresh_from_db()
    assert outcome == runner.Outcome.SUCCEEDED
    assert (job.status, job.attempts, job.progress) == (Status.SUCCEEDED, 2, 100)
    assert files_of(job, private_storage) == [f"{job.token}.csv"]
    assert job.absolute_path.read_text(encoding="utf-8-sig").count("\n") == 14
    started = job.events.filter(kind=ExportEvent.Kind.STARTED).get()
    assert started.attempt == 2 and "restarted" in started.message


def test_a_job_with_a_live_worker_is_left_to_it(populated, personas):
    job = queued_job(populated.study, personas["coordinator_a"])
    ExportJob.objects.filter(pk=job.pk).update(
        status=Status.RUNNING, attempts=1, heartbeat_at=timezone.now(), progress=30
    )

    assert runner.export_job_run(job_id=job.pk) == runner.Outcome.BUSY

    job.refresh_from_db()
    assert (job.status, job.attempts, job.progress) == (Status.RUNNING, 1, 30)


def test_a_job_that_keeps_killing_its_worker_is_given_up(populated, personas, settings):
    settings.EXPORT_MAX_ATTEMPTS = 3
    job = queued_job(populated.study, personas["coordinator_a"])
    ExportJob.objects.filter(pk=job.pk).update(
        status=Status.RUNNING, attempts=3, heartbeat_at=timezone.now() - timedelta(hours=1)
    )

    assert runner.export_job_run(job_id=job.pk) == runner.Outcome.FAILED

    job.refresh_from_db()
    assert job.status == Status.FAILED
    assert "interrupted 3 times" in job.error_message


def test_a_superseded_run_stops_without_touching_the_job(populated, personas, private_storage):
    job = queued_job(populated.study, personas["coordinator_a"])
    claimed, attempt = runner._claim(job.pk)
    ticker = runner._Ticker(job.pk, attempt)
    ticker(10)
    # Another worker takes the job over (e.g. after a long pause of this one).
    ExportJob.objects.filter(pk=job.pk).update(attempts=attempt + 1)

    with pytest.raises(runner.Superseded):
        ticker(15)
    job.refresh_from_db()
    assert job.progress == 10


def test_a_failing_export_ends_failed_with_a_readable_message(
    populated, run_export, settings, tmp_path
):
    # Private storage points below a file: nothing can be written there.
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    settings.PRIVATE_STORAGE_ROOT = blocker / "private"

    job = run_export(populated.study, "csv")

    assert job.status == Status.FAILED
    assert "could not be written to the private storage folder" in job.error_message
    assert "Traceback" not in job.error_message
    assert kinds(job) == ["queued", "started", "failed"]
    assert job.events.get(kind="failed").message == job.error_message
    assert job.file_path == ""


def test_progress_ticks_a_fixed_number_of_times_up_to_95():
    for rows in (0, 1, 7, 20, 1000):
        seen: list[int] = []
        progress = Progress(seen.append)
        progress.expect(rows)
        for _ in range(rows):
            progress.advance()
        progress.finish()
        assert len(seen) == TICKS
        assert seen == sorted(seen) and 0 < seen[0] and seen[-1] == 95


def test_stalled_running_and_never_picked_up_jobs_are_requeued(
    populated, personas, django_capture_on_commit_callbacks, private_storage
):
    coordinator = personas["coordinator_a"]
    dead = queued_job(populated.study, coordinator)
    lost = queued_job(populated.study, coordinator)
    alive = queued_job(populated.study, coordinator)
    hour_ago = timezone.now() - timedelta(hours=1)
    ExportJob.objects.filter(pk=dead.pk).update(
        status=Status.RUNNING, attempts=1, heartbeat_at=hour_ago
    )
    ExportJob.objects.filter(pk=lost.pk).update(queued_at=hour_ago)
    ExportJob.objects.filter(pk=alive.pk).update(
        status=Status.RUNNING, attempts=1, heartbeat_at=timezone.now()
    )

    with django_capture_on_commit_callbacks(execute=True):
        resumed = resume_stalled_jobs.delay().get()

    assert resumed == 2
    for job in (dead, lost):
        job.refresh_from_db()
        assert job.status == Status.SUCCEEDED
        assert "requeued" in kinds(job)
    alive.refresh_from_db()
    assert alive.status == Status.RUNNING
    assert export_jobs_resume_stalled() == 0


def test_expired_files_are_deleted_and_the_job_marked(populated, run_export, private_storage):
    old = run_export(populated.study, "csv")
    fresh = run_export(populated.study, "json")
    ExportJob.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    old_path = old.absolute_path

    assert delete_expired_files.delay().get() == 1

    old.refresh_from_db()
    assert not old_path.exists()
    assert (old.status, old.file_path) == (Status.EXPIRED, "")
    assert "expired" in kinds(old)
    fresh.refresh_from_db()
    assert fresh.status == Status.SUCCEEDED and fresh.absolute_path.exists()
    assert export_files_delete_expired() == 0


def test_files_no_job_accounts_for_are_swept(populated, run_export, private_storage, settings):
    settings.EXPORT_STALE_AFTER_SECONDS = 0
    job = run_export(populated.study, "csv")
    folder = job.absolute_path.parent
    orphan = folder / "deleted-job-token.csv"
    leftover = folder / f"{job.token}.csv.1.tmp"
    orphan.write_text("old")
    leftover.write_text("half")

    export_files_delete_expired()

    assert not orphan.exists() and not leftover.exists()
    assert job.absolute_path.exists()


def _killed_run_folder(job: ExportJob, root: Path, attempt: int = 1) -> Path:
    """What a worker killed mid-export leaves: its run folder, with sheet files."""
    folder = (
        root / "exports" / f"study-{job.study_id}" / f"{job.token}.{job.extension}.{attempt}.tmp"
    )
    folder.mkdir(parents=True)
    for number in (1, 2):
        (folder / f"sheet{number}.xml").write_text("<worksheet><sheetData><row r='1'>")
    return folder


def _age(path: Path, seconds: int = 3600) -> None:
    import os

    then = timezone.now().timestamp() - seconds
    for part in [path, *path.iterdir()]:
        os.utime(part, (then, then))


def test_the_next_run_removes_the_folder_of_a_killed_run(populated, personas, private_storage):
    job = queued_job(populated.study, personas["coordinator_a"], fmt="xlsx")
    long_ago = timezone.now() - timedelta(hours=1)
    ExportJob.objects.filter(pk=job.pk).update(
        status=Status.RUNNING, attempts=1, heartbeat_at=long_ago, started_at=long_ago
    )
    _killed_run_folder(job, private_storage)

    assert runner.export_job_run(job_id=job.pk) == runner.Outcome.SUCCEEDED

    assert files_of(job, private_storage) == [f"{job.token}.xlsx"]


def test_a_running_export_keeps_its_folder_while_others_run_and_sweep(
    populated, personas, run_export, private_storage, settings
):
    # Given a job whose worker is writing it (fresh heartbeat, sheet files not
    # touched for an hour: a slow query)
    running = queued_job(populated.study, personas["coordinator_a"], fmt="xlsx")
    ExportJob.objects.filter(pk=running.pk).update(
        status=Status.RUNNING, attempts=1, heartbeat_at=timezone.now()
    )
    folder = _killed_run_folder(running, private_storage)
    _age(folder)
    contents = sorted(p.name for p in folder.iterdir())

    # When another export of the study runs, and the sweep runs
    other = run_export(populated.study, "xlsx")
    settings.EXPORT_STALE_AFTER_SECONDS = 0
    export_files_delete_expired()

    # Then the running job's files are all still there.
    assert other.status == Status.SUCCEEDED
    assert sorted(p.name for p in folder.iterdir()) == contents
    # And a duplicate delivery of the running job leaves them alone too.
    settings.EXPORT_STALE_AFTER_SECONDS = 300
    assert runner.export_job_run(job_id=running.pk) == runner.Outcome.BUSY
    assert sorted(p.name for p in folder.iterdir()) == contents


@pytest.mark.parametrize("started", ["before_the_sweep", "while_the_sweep_looks"])
def test_the_sweep_keeps_a_running_exports_temporary_file(
    populated, personas, private_storage, settings, started
):
    # Given an export that is running: one the sweep finds running (its file
    # untouched for an hour), or one that started after the sweep listed the jobs.
    settings.EXPORT_STALE_AFTER_SECONDS = 0 if started == "before_the_sweep" else 300
    folder = private_storage / "exports" / f"study-{populated.study.pk}"
    folder.mkdir(parents=True)
    runs = []

    def start_run() -> Path:
        job = queued_job(populated.study, personas["coordinator_a"], fmt="csv")
        ExportJob.objects.filter(pk=job.pk).update(
            status=Status.RUNNING, attempts=1, heartbeat_at=timezone.now()
        )
        temporary = folder / f"{job.token}.csv.1.tmp"
        temporary.write_text("evaluation_id,participant_id\n1,")
        runs.append(temporary)
        return temporary

    def run_starts_after_listing(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not runs and sql.startswith('SELECT "exports_exportjob"."token"'):
            start_run()
        return result

    # When the sweep runs
    if started == "before_the_sweep":
        temporary = start_run()
        then = timezone.now().timestamp() - 3600
        os.utime(temporary, (then, then))
        export_files_delete_expired()
    else:
        with connection.execute_wrapper(run_starts_after_listing):
            export_files_delete_expired()
        [temporary] = runs

    # Then the running export's file is still there.
    assert temporary.read_text() == "evaluation_id,participant_id\n1,"


@pytest.mark.parametrize("end", ["given_up", "deleted"])
def test_the_sweep_removes_the_folder_of_a_run_nobody_will_resume(
    populated, personas, private_storage, settings, end
):
    job = queued_job(populated.study, personas["coordinator_a"], fmt="xlsx")
    folder = _killed_run_folder(job, private_storage, attempt=3)
    fresh = _killed_run_folder(
        queued_job(populated.study, personas["coordinator_a"], fmt="xlsx"), private_storage
    )
    if end == "given_up":
        ExportJob.objects.filter(pk=job.pk).update(status=Status.FAILED, attempts=3)
    else:
        job.delete()
    _age(folder, seconds=400)

    export_files_delete_expired()

    assert not folder.exists()
    assert fresh.exists()  # a queued job's folder: its own run clears it
