"""`manage.py export_study` runs the web job's code and writes the file."""

import pytest
from django.core.management import CommandError, call_command

from exports.models import ExportJob
from tests.exports.readers import read_csv, read_xlsx, sheet_dicts


def test_export_study_by_slug_writes_the_same_export(populated, tmp_path):
    target = tmp_path / "out.xlsx"

    call_command("export_study", populated.study.slug, "--format", "xlsx", "-o", str(target))

    job = ExportJob.objects.get()
    assert (job.status, job.requested_by, job.format) == ("succeeded", None, "xlsx")
    assert target.read_bytes() == job.absolute_path.read_bytes()
    sheets = read_xlsx(target)
    assert len(sheet_dicts(sheets["Evaluations"])) == 13
    assert list(job.events.values_list("kind", flat=True)) == ["queued", "started", "succeeded"]


def test_export_study_by_id_with_options(populated, tmp_path, capsys):
    target = tmp_path / "out.csv"

    call_command(
        "export_study", str(populated.study.pk), "--format", "csv", "-o", str(target),
        "--include-pilot", "--include-free-text",
    )  # fmt: skip

    header, rows = read_csv(target)
    assert len(rows) == 15 and "prompt_texts" in header
    assert "free text" in capsys.readouterr().err


def test_export_study_of_an_unknown_study_fails(db, tmp_path):
    with pytest.raises(CommandError, match="No study"):
        call_command("export_study", "nope", "--format", "csv", "-o", str(tmp_path / "x.csv"))


def test_a_failing_command_export_says_why(populated, tmp_path, settings):
    blocker = tmp_path / "file"
    blocker.write_text("")
    settings.PRIVATE_STORAGE_ROOT = blocker / "private"

    with pytest.raises(CommandError, match="private storage folder"):
        call_command(
            "export_study", populated.study.slug, "--format", "json", "-o", str(tmp_path / "x")
        )


def test_export_study_runs_the_job_here_without_queueing_it(
    populated, tmp_path, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        call_command(
            "export_study", populated.study.slug, "--format", "csv", "-o", str(tmp_path / "x.csv")
        )

    # No task for the workers: a worker taking the job would race this process for it.
    assert callbacks == []
    queued = ExportJob.objects.get().events.get(kind="queued")
    assert (queued.actor, queued.message) == (None, "started from the command line")


def test_export_study_finds_a_study_whose_slug_is_a_number(populated, tmp_path):
    study = populated.study
    study.slug = "999999"
    study.save(update_fields=["slug"])

    call_command("export_study", "999999", "--format", "csv", "-o", str(tmp_path / "x.csv"))

    assert ExportJob.objects.get().study == study
