"""The study report through the API (docs/design/api.md §16): started as a
job, its figures read back as the job stored them but without images, and
its criterion and validation sections only where the study has them."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from api.views.figures import without_images
from criterion.preregistration.services import save_version
from exports.models import ExportJob
from tests.api.conftest import READ
from tests.criterion.annotation_data import study_with_transcripts
from tests.exports.factories import populate_study

SECTIONS = ["api:report_criterion", "api:report_validation"]


@pytest.fixture
def coordinator(api_as, study_a):
    return api_as("coordinator_a", [study_a])


@pytest.fixture
def report_of(coordinator, django_capture_on_commit_callbacks):
    """report_of(study) -> the finished report job, started through the API."""

    def start(study):
        with django_capture_on_commit_callbacks(execute=True):
            response = coordinator.post(reverse("api:report_jobs", args=[study.slug]))
        assert response.status_code == 202
        poll = coordinator.get(response["Location"])
        assert poll.json()["status"] == "succeeded", poll.json()["error"]
        return ExportJob.objects.get(token=response.json()["token"])

    return start


def stored_report(study, personas, **fields) -> ExportJob:
    """A finished report job as the runner leaves one, with a little report_data."""
    values = {
        "study": study,
        "requested_by": personas["coordinator_a"],
        "format": "report-html",
        "status": "succeeded",
        "file_path": "exports/r.html",
        "finished_at": timezone.now(),
        "expires_at": timezone.now() + timedelta(days=1),
        "report_data": {"n": 1, "figures": {}, "criterion": {"plan": {}}},
        **fields,
    }
    return ExportJob.objects.create(**values)


def read(client, name, study):
    return client.get(reverse(name, args=[study.slug]))


def test_a_report_is_started_and_its_figures_read_back_without_images(
    personas, study_a, coordinator, report_of
):
    # given a study with data and a report computed through the API
    populate_study(study_a, sessions=3)
    job = report_of(study_a)

    # when its figures are read
    response = read(coordinator, "api:report", study_a)

    # then they are the stored report's numbers, in English, and no image
    assert response.status_code == 200
    body = response.json()
    stored = job.report_data
    assert body["job"]["token"] == job.token and body["job"]["format"] == "report-html"
    assert body["job"]["download_url"].endswith(f"/exports/{job.token}/file/")
    report = body["report"]
    assert report["n"] == stored["n"] > 0
    assert report["analysis"]["cronbach_alpha"] == stored["analysis"]["cronbach_alpha"]
    assert report["table6"] == stored["table6"]
    assert report["exclusions"] == stored["exclusions"]
    assert "figures" not in report and "figures" in stored
    assert "data:image" in json.dumps(stored)
    assert "data:image" not in response.content.decode()
    assert set(report) == set(stored) - {"figures"}


def test_a_report_job_is_listed_and_its_file_downloaded(personas, study_a, coordinator, report_of):
    populate_study(study_a, sessions=2)
    job = report_of(study_a)

    listed = read(coordinator, "api:report_jobs", study_a).json()
    download = coordinator.get(listed[0]["download_url"])

    assert [entry["token"] for entry in listed] == [job.token]
    assert download.status_code == 200
    assert download["Content-Type"] == "text/html; charset=utf-8"
    assert b"".join(download.streaming_content) == job.absolute_path.read_bytes()
    assert job.events.filter(kind="downloaded").count() == 1


def test_without_a_report_the_figures_are_404(personas, study_a, coordinator):
    responses = [read(coordinator, name, study_a) for name in ["api:report", *SECTIONS]]

    assert [r.status_code for r in responses] == [404] * 3
    assert all(r.json()["detail"].startswith("No report yet.") for r in responses)


def test_an_expired_report_is_not_shown(personas, study_a, coordinator):
    stored_report(study_a, personas, expires_at=timezone.now() - timedelta(minutes=1))

    assert read(coordinator, "api:report", study_a).status_code == 404


def test_the_latest_report_is_shown(personas, study_a, coordinator):
    now = timezone.now()
    latest = stored_report(study_a, personas, finished_at=now)
    stored_report(study_a, personas, finished_at=now - timedelta(hours=1))
    stored_report(study_a, personas, finished_at=now + timedelta(hours=1), status="failed")

    assert read(coordinator, "api:report", study_a).json()["job"]["token"] == latest.token


def test_a_plain_study_has_no_criterion_or_validation_section(
    personas, study_a, coordinator, report_of
):
    populate_study(study_a, sessions=2)
    report_of(study_a)

    responses = [read(coordinator, name, study_a) for name in SECTIONS]

    assert [r.status_code for r in responses] == [404, 404]
    assert "no criterion section" in responses[0].json()["detail"]
    assert "no validation section" in responses[1].json()["detail"]


def test_a_criterion_study_has_its_section(personas, study_a, coordinator, report_of):
    # given a study that began the criterion study with a pre-registration
    study_with_transcripts(study_a, sessions=2)
    save_version(study_a, {}, personas["coordinator_a"])
    job = report_of(study_a)

    response = read(coordinator, "api:report_criterion", study_a)

    assert response.status_code == 200
    body = response.json()
    assert body["job"]["token"] == job.token
    assert body["criterion"] == without_images(job.report_data["criterion"])
    assert body["criterion"]["plan"]["h1_threshold"] == 0.40
    assert "<svg" not in response.content.decode()
    assert read(coordinator, "api:report_validation", study_a).status_code == 404


def test_a_validation_study_has_its_section(personas, study_a, coordinator, report_of):
    # given a study with the 30 evaluations the section needs
    populate_study(study_a, sessions=15, extras=False)
    job = report_of(study_a)

    response = read(coordinator, "api:report_validation", study_a)

    assert response.status_code == 200
    body = response.json()
    assert job.report_data["n"] == 30
    assert body["job"]["token"] == job.token
    assert body["validation"] == without_images(job.report_data["validation"])
    assert body["validation"]["grouping"] == job.report_data["validation"]["grouping"]
    assert read(coordinator, "api:report_criterion", study_a).status_code == 404


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "outsider"])
def test_only_the_study_coordinators_read_its_report(
    persona, personas, study_a, api_as, django_capture_on_commit_callbacks
):
    client = api_as(persona, [study_a])

    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(reverse("api:report_jobs", args=[study_a.slug]))
    responses = [read(client, name, study_a) for name in ["api:report", *SECTIONS]]

    assert [started.status_code] + [r.status_code for r in responses] == [404] * 4
    assert not ExportJob.objects.exists()


def test_a_read_only_token_reads_the_report_but_starts_none(personas, study_a, api_as):
    stored_report(study_a, personas)
    client = api_as("coordinator_a", [study_a], access=READ)

    assert read(client, "api:report", study_a).status_code == 200
    assert client.post(reverse("api:report_jobs", args=[study_a.slug])).status_code == 403
    assert ExportJob.objects.count() == 1


def test_images_are_left_out_at_any_depth():
    report = {
        "figures": {"profile": "data:image/png;base64,AAAA"},
        "n": 3,
        "section": {
            "plot": "data:image/svg+xml;base64,BBBB",
            "h1": {"svg": '<svg xmlns="http://www.w3.org/2000/svg"></svg>', "points": [[1, 2]]},
            "rows": [{"image": "data:image/png;base64,CCCC", "r": 0.5}, "data:image/png;base64,D"],
            "note": "a data:image mentioned inside a sentence stays",
        },
    }

    assert without_images(report) == {
        "figures": {},
        "n": 3,
        "section": {
            "h1": {"points": [[1, 2]]},
            "rows": [{"r": 0.5}, None],
            "note": "a data:image mentioned inside a sentence stays",
        },
    }


def test_reading_the_report_takes_as_many_queries_for_thirty_reports_as_for_one(
    personas, study_a, coordinator
):
    def add(count):
        for _ in range(count):
            stored_report(study_a, personas)

    def queries(name):
        with CaptureQueriesContext(connection) as captured:
            assert read(coordinator, name, study_a).status_code == 200
        return len(captured)

    add(1)
    one = [queries(name) for name in ["api:report", "api:report_criterion", "api:report_jobs"]]
    add(29)
    thirty = [queries(name) for name in ["api:report", "api:report_criterion", "api:report_jobs"]]

    assert thirty == one
