"""The replication package as an export job (docs/design/exports.md §7.7):
started from the Exports page, over the non-pilot sample even when pilots
are asked for, the same anonymized tables as `csv-tables`, a README naming
the platform's version, a manifest that holds, and only the script sections
the study's data support, whose script R runs to the same figures."""

import csv
import datetime as dt
import hashlib
import io
import time
import zipfile

from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone, translation

from exports.models import ExportJob
from exports.replication.package import MANIFEST, platform_version
from exports.runner import export_job_run
from exports.services import export_job_create
from surveys.models import Study
from tests.exports.factories import populate_study
from tests.replication.package import export_package, recomputed, run_r


def _header(archive: zipfile.ZipFile, name: str) -> list[str]:
    return next(csv.reader(io.StringIO(archive.read(name).decode("utf-8-sig"))))


def test_the_exports_page_starts_a_package_of_the_non_pilot_sample(
    personas, study_a, client_for, django_capture_on_commit_callbacks
):
    populate_study(study_a, sessions=6)
    client = client_for("coordinator_a")
    listing = client.get(reverse("exports:export_list", args=[study_a.slug]))
    assert b'value="replication"' in listing.content

    with django_capture_on_commit_callbacks(execute=True):
        client.post(
            reverse("exports:export_list", args=[study_a.slug]),
            {"format": "replication", "include_pilot": "on"},
        )
    job = ExportJob.objects.get()
    assert (job.format, job.include_pilot) == ("replication", False)
    assert job.status == ExportJob.Status.SUCCEEDED, job.error_message
    assert job.download_name.endswith("-replication.zip")

    with zipfile.ZipFile(job.absolute_path) as package:
        names = set(package.namelist())
        sessions = list(
            csv.DictReader(io.StringIO(package.read("data/sessions.csv").decode("utf-8-sig")))
        )
        assert sessions and {row["pilot"] for row in sessions} == {"0"}
        # The tables of csv-tables, column for column.
        tables = export_job_create(
            study=study_a, requested_by=None, fmt="csv-tables", dispatch=False
        )
        export_job_run(job_id=tables.pk)
        tables.refresh_from_db()
        with zipfile.ZipFile(tables.absolute_path) as plain:
            for name in plain.namelist():
                if name != "about.csv":
                    assert _header(package, f"data/{name}") == _header(plain, name), name
        readme = package.read("README.md").decode()
        assert f"SHS study platform {platform_version()}" in readme
        assert "Rscript analysis/analysis.R" in readme
        manifest = package.read(MANIFEST).decode().splitlines()
        listed = dict(reversed(line.split("  ", 1)) for line in manifest)
        assert set(listed) == names - {MANIFEST}
        # The same tables as SPSS files, the spss extra being installed here.
        assert {"data/spss/evaluations.sav", "data/spss/sessions.sav"} <= names
        for name, digest in listed.items():
            assert hashlib.sha256(package.read(name)).hexdigest() == digest, name


def test_a_small_study_gets_only_the_sections_its_data_support(personas, study_a, tmp_path):
    populate_study(study_a, sessions=4, extras=False)
    folder = export_package(study_a, tmp_path / "small")
    sections = {figure["section"] for figure in recomputed(folder)["figures"].values()}
    script = (folder / "analysis" / "analysis.R").read_text()

    assert "scores" in sections
    assert not sections & {"cfa", "invariance", "retest", "criterion"}
    assert "cfa(" not in script and "measurementInvariance" not in script
    run = run_r(folder)
    assert run.returncode == 0, run.output[-4000:]
    assert "Every figure equals the report's" in run.output


def test_the_demo_study_replicates(db, tmp_path):
    call_command("seed_demo", "--force", stdout=io.StringIO())
    folder = export_package(Study.objects.get(slug="shs-demo"), tmp_path / "demo")
    run = run_r(folder)
    assert run.returncode == 0, run.output[-4000:]
    assert "Every figure equals the report's" in run.output


def test_a_real_worker_builds_the_package(celery_worker_process, personas, study_a):
    populate_study(study_a, sessions=4, extras=False)
    job = export_job_create(
        study=study_a, requested_by=personas["coordinator_a"], fmt="replication"
    )

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and job.status not in ExportJob.FINISHED:
        time.sleep(0.5)
        job.refresh_from_db()
    assert job.status == ExportJob.Status.SUCCEEDED, celery_worker_process.log_text()
    with zipfile.ZipFile(job.absolute_path) as package:
        assert {"analysis/analysis.R", "report/figures.json", MANIFEST} <= set(package.namelist())


def test_the_readme_keeps_english_numbers_and_utc_in_a_german_job(personas, study_a):
    populate_study(study_a, sessions=2, extras=False)
    with translation.override("de"), timezone.override("Europe/Vienna"):
        job = export_job_create(study=study_a, requested_by=None, fmt="replication", dispatch=False)
        export_job_run(job_id=job.pk)
    job.refresh_from_db()

    with zipfile.ZipFile(job.absolute_path) as package:
        readme = package.read("README.md").decode()
    assert "- closed_form: 1e-08 (" in readme and "- rounded_days: 0.1 (" in readme
    moment = job.started_at.astimezone(dt.UTC)
    assert f"stood at {moment:%Y-%m-%d} " in readme
