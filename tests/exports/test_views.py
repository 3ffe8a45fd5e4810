"""Export pages: only the study's coordinators; everyone else gets 404 (anonymous
visitors the login page on the two menu pages), and expired files are gone."""

import json
from datetime import timedelta

import pytest
from django.contrib.staticfiles import finders
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from exports.models import ExportEvent, ExportJob
from exports.services import export_files_delete_expired

PERSONAS = ["coordinator_a", "coordinator_b", "experimenter_a", "outsider", "anonymous"]
JOB_VIEWS = ["exports:job_detail", "exports:job_status", "exports:job_download"]
MENU_VIEWS = ["exports:export_list", "exports:study_report"]


@pytest.fixture
def finished_job(populated, run_export):
    return run_export(populated.study, "csv")


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("name", JOB_VIEWS)
def test_job_pages_and_downloads_are_for_the_study_coordinators_only(
    name, persona, finished_job, client_for
):
    url = reverse(name, args=[finished_job.study.slug, finished_job.token])

    response = client_for(persona).get(url)

    assert response.status_code == (200 if persona == "coordinator_a" else 404)


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("name", MENU_VIEWS)
def test_export_and_report_pages_are_for_the_study_coordinators_only(
    name, persona, study_a, client_for
):
    response = client_for(persona).get(reverse(name, args=[study_a.slug]))

    if persona == "anonymous":
        assert response.status_code == 302
        assert response.url.startswith(reverse("account_login"))
    else:
        assert response.status_code == (200 if persona == "coordinator_a" else 404)


@pytest.mark.parametrize("persona", ["coordinator_b", "experimenter_a", "outsider", "anonymous"])
def test_starting_an_export_or_report_outside_the_role_changes_nothing(
    persona, study_a, client_for
):
    client = client_for(persona)

    responses = [
        client.post(reverse("exports:export_list", args=[study_a.slug]), {"format": "csv"}),
        client.post(reverse("exports:study_report", args=[study_a.slug])),
    ]

    assert [r.status_code for r in responses] in ([404, 404], [302, 302])
    assert not ExportJob.objects.exists()


def test_a_job_of_another_study_is_404_under_ones_own_study(
    populated, run_export, study_b, personas, client_for
):
    from surveys.models import StudyMembership

    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=study_b, role=StudyMembership.Role.COORDINATOR
    )
    job = run_export(populated.study, "csv")

    response = client_for("coordinator_a").get(
        reverse("exports:job_download", args=[study_b.slug, job.token])
    )

    assert response.status_code == 404


def test_job_urls_carry_an_unguessable_token(finished_job):
    # 24 random bytes in URL-safe base64: 192 bits.
    assert len(finished_job.token) >= 32
    url = reverse("exports:job_detail", args=[finished_job.study.slug, finished_job.token])
    assert str(finished_job.pk) not in url.split("/")


def test_a_coordinator_starts_an_export_and_downloads_it(
    populated, client_for, django_capture_on_commit_callbacks
):
    client = client_for("coordinator_a")
    study = populated.study

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("exports:export_list", args=[study.slug]),
            {"format": "xlsx", "include_pilot": "on"},
        )

    job = ExportJob.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("exports:job_detail", args=[study.slug, job.token])
    assert (job.format, job.include_pilot, job.include_free_text) == ("xlsx", True, False)
    assert job.requested_by.email == "coord-a@example.org"
    page = client.get(response.url)
    assert page.status_code == 200
    download_url = reverse("exports:job_download", args=[study.slug, job.token])
    assert download_url.encode() in page.content

    download = client.get(download_url)

    assert download.status_code == 200
    assert download["Content-Type"].startswith("application/vnd.openxmlformats")
    disposition = download["Content-Disposition"]
    assert disposition.startswith("attachment;") and f"{study.slug}-shs-export-" in disposition
    assert b"".join(download.streaming_content) == job.absolute_path.read_bytes()
    assert download["Cache-Control"] == "private, no-store"
    assert job.events.filter(kind=ExportEvent.Kind.DOWNLOADED).get().actor.email == (
        "coord-a@example.org"
    )
    listing = client.get(reverse("exports:export_list", args=[study.slug]))
    assert download_url.encode() in listing.content


def test_a_running_job_shows_a_progress_bar_fed_by_a_static_poller(populated, personas, client_for):
    from exports.services import export_job_create

    job = export_job_create(
        study=populated.study, requested_by=personas["coordinator_a"], fmt="csv"
    )
    ExportJob.objects.filter(pk=job.pk).update(status="running", progress=35)
    client = client_for("coordinator_a")

    page = client.get(reverse("exports:job_detail", args=[job.study.slug, job.token]))
    status = client.get(reverse("exports:job_status", args=[job.study.slug, job.token]))

    html = page.content.decode()
    assert '<progress class="progress" max="100" value="35"' in html
    assert 'src="/static/exports/job.js"' in html
    assert "<script>" not in html and "style=" not in html
    assert finders.find("exports/job.js")
    payload = json.loads(status.content)
    assert payload == {
        "status": "running",
        "status_label": "Running",
        "progress": 35,
        "finished": False,
        "error": "",
        "download_url": None,
    }


def test_a_failed_job_page_shows_the_message(populated, personas, client_for):
    job = ExportJob.objects.create(
        study=populated.study, format="csv", status="failed", error_message="Disk full, sorry."
    )

    page = client_for("coordinator_a").get(
        reverse("exports:job_detail", args=[job.study.slug, job.token])
    )
    download = client_for("coordinator_a").get(
        reverse("exports:job_download", args=[job.study.slug, job.token])
    )

    assert b"Disk full, sorry." in page.content
    assert download.status_code == 404


def test_an_expired_download_is_gone(finished_job, client_for):
    url = reverse("exports:job_download", args=[finished_job.study.slug, finished_job.token])
    client = client_for("coordinator_a")
    ExportJob.objects.filter(pk=finished_job.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    before_sweep = client.get(url)
    export_files_delete_expired()
    after_sweep = client.get(url)

    assert before_sweep.status_code == 410
    assert after_sweep.status_code == 410
    assert b"no longer available" in after_sweep.content
    assert not finished_job.absolute_path.exists()
    # Outsiders still learn nothing about it.
    assert client_for("coordinator_b").get(url).status_code == 404


def test_the_study_page_links_exports_and_report_for_coordinators(study_a, client_for):
    url = reverse("surveys:study_detail", args=[study_a.slug])
    exports_url = reverse("exports:export_list", args=[study_a.slug]).encode()
    report_url = reverse("exports:study_report", args=[study_a.slug]).encode()

    coordinator_page = client_for("coordinator_a").get(url).content
    experimenter_page = client_for("experimenter_a").get(url).content

    assert exports_url in coordinator_page and report_url in coordinator_page
    assert exports_url not in experimenter_page and report_url not in experimenter_page


def test_the_export_form_warns_about_free_text(study_a, client_for):
    page = client_for("coordinator_a").get(reverse("exports:export_list", args=[study_a.slug]))

    assert b"can contain names or other details that identify a person" in page.content
    for fmt in ("csv", "xlsx", "json"):
        assert f'value="{fmt}"'.encode() in page.content


def test_the_system_check_refuses_private_storage_under_a_served_folder(settings, tmp_path):
    from exports.checks import private_storage_is_private

    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.PRIVATE_STORAGE_ROOT = tmp_path / "private"
    assert private_storage_is_private() == []

    settings.PRIVATE_STORAGE_ROOT = tmp_path / "media" / "exports"
    assert [error.id for error in private_storage_is_private()] == ["exports.E001"]


def test_job_pages_do_not_load_the_stored_report(populated, run_export, client_for):
    # Given a finished report job, whose row carries the whole report and its figures
    job = run_export(populated.study, "report-html")
    client = client_for("coordinator_a")

    for name in JOB_VIEWS:
        # When its page, its status (polled every second) or its file is fetched
        with CaptureQueriesContext(connection) as captured:
            response = client.get(reverse(name, args=[job.study.slug, job.token]))
            if response.streaming:
                b"".join(response.streaming_content)  # the test client closes the file after

        # Then the stored report stays in the database.
        assert response.status_code == 200, name
        assert not [q["sql"] for q in captured if "report_data" in q["sql"]], name
