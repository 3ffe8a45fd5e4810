"""Export jobs through the API (docs/design/api.md §16): started, polled and
downloaded by the study's coordinators only, refused as the export page
refuses, and a download leaves the same rows as one from the page."""

import csv
import io
import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEntry
from exports.models import ExportEvent, ExportJob
from exports.runner import export_job_run
from exports.services import export_job_create
from scoring.instruments.shs import ITEM_KEYS
from surveys.models import StudyMembership
from tests.api.conftest import READ
from tests.exports.expected import expected_evaluations
from tests.exports.factories import populate_study

PROBLEM = "application/problem+json"


@pytest.fixture
def populated(personas, study_a):
    return populate_study(study_a, sessions=2)


@pytest.fixture
def coordinator(api_as, study_a):
    return api_as("coordinator_a", [study_a])


@pytest.fixture
def start(django_capture_on_commit_callbacks):
    """start(client, slug, body) -> the response; the job runs once the request commits."""

    def post(client, slug, body, name="api:export_list"):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(
                reverse(name, args=[slug]), json.dumps(body), content_type="application/json"
            )

    return post


def finished_job(study, personas, fmt="csv", **options) -> ExportJob:
    job = export_job_create(
        study=study, requested_by=personas["coordinator_a"], fmt=fmt, dispatch=False, **options
    )
    export_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ExportJob.Status.SUCCEEDED, job.error_message
    return job


def job_url(study, job, name="api:export_job") -> str:
    return reverse(name, args=[study.slug, job.token])


def test_a_coordinator_starts_an_export_polls_it_and_downloads_the_csv(
    populated, coordinator, start, study_a
):
    # given a study with data, when its coordinator starts a CSV export
    response = start(coordinator, study_a.slug, {"format": "csv", "include_pilot": False})

    # then it is accepted, and its address is where to ask for its status
    assert response.status_code == 202
    job = ExportJob.objects.get()
    body = response.json()
    assert body["url"] == f"http://testserver{job_url(study_a, job)}"
    assert response["Location"] == body["url"]
    assert (body["token"], body["format"], body["include_pilot"]) == (job.token, "csv", False)
    assert (job.requested_by.email, job.include_free_text) == ("coord-a@example.org", False)

    # when it is polled after the worker ran it
    poll = coordinator.get(body["url"])

    assert poll.status_code == 200
    assert poll["Cache-Control"] == "no-store"
    status = poll.json()
    assert (status["status"], status["finished"], status["progress"]) == ("succeeded", True, 100)
    assert status["status_label"] == "Ready" and status["error"] == ""
    assert status["file_size"] == job.absolute_path.stat().st_size
    assert status["download_url"] == f"http://testserver{job_url(study_a, job, 'api:export_file')}"

    # when the file is downloaded
    download = coordinator.get(status["download_url"])

    assert download.status_code == 200
    assert download["Content-Type"] == "text/csv; charset=utf-8"
    assert download["Cache-Control"] == "private, no-store"
    disposition = download["Content-Disposition"]
    assert disposition.startswith("attachment;") and "study-a-shs-export-" in disposition
    text = b"".join(download.streaming_content).decode("utf-8-sig")
    rows = list(csv.DictReader(io.StringIO(text)))
    expected = expected_evaluations(study_a)
    assert len(rows) == len(expected) > 0
    answers = sorted(tuple(int(row[key]) for key in ITEM_KEYS) for row in rows)
    assert answers == sorted(tuple(row[key] for key in ITEM_KEYS) for row in expected.values())


def test_a_download_writes_the_event_and_audit_row_the_page_writes(
    populated, personas, coordinator, study_a, client_for
):
    job = finished_job(study_a, personas)
    before = set(AuditEntry.objects.values_list("pk", flat=True))

    response = coordinator.get(job_url(study_a, job, "api:export_file"))

    assert response.status_code == 200
    b"".join(response.streaming_content)
    event = ExportEvent.objects.get(job=job, kind=ExportEvent.Kind.DOWNLOADED)
    assert (event.actor, event.attempt) == (personas["coordinator_a"], job.attempts)
    new = AuditEntry.objects.exclude(pk__in=before).order_by("seq")
    assert [row.kind for row in new] == ["export_downloaded", "api_token_used"]
    downloaded, used = new
    assert downloaded.study_id == used.study_id == study_a.pk
    assert downloaded.actor_id == personas["coordinator_a"].pk
    assert downloaded.target == f"export {job.pk}"
    assert downloaded.details == {"format": "csv", "attempt": job.attempts}
    # The call's row names the route, never the path with the job's token.
    assert used.details["endpoint"] == "api/v1/studies/<slug:slug>/exports/<slug:token>/file/"
    assert job.token not in json.dumps(used.details)

    # and a download from the page writes the same two rows of its own
    page = client_for("coordinator_a").get(
        reverse("exports:job_download", args=[study_a.slug, job.token])
    )
    assert page.status_code == 200
    page_row = AuditEntry.objects.filter(kind="export_downloaded").latest("seq")
    assert (page_row.target, page_row.details) == (downloaded.target, downloaded.details)
    assert ExportEvent.objects.filter(job=job, kind="downloaded").count() == 2


@pytest.mark.parametrize(
    "body, field",
    [
        ({"format": "pdf"}, "format"),
        ({"format": "report-html"}, "format"),
        ({}, "format"),
        ({"format": "jsonl", "include_free_text": False}, "include_free_text"),
    ],
    ids=["unknown", "report", "missing", "jsonl-without-free-text"],
)
def test_refused_input_names_the_field_and_starts_nothing(body, field, study_a, coordinator, start):
    response = start(coordinator, study_a.slug, body)

    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    problem = response.json()
    assert problem["status"] == 400
    assert [error["field"] for error in problem["errors"]] == [field]
    assert not ExportJob.objects.exists()
    assert not AuditEntry.objects.filter(kind="export_created").exists()


def test_jsonl_without_free_text_is_refused_in_the_pages_words(study_a, coordinator, start):
    response = start(coordinator, study_a.slug, {"format": "jsonl"})

    message = response.json()["errors"][0]["message"]
    assert message.startswith("The transcripts file is free text as a whole")


def test_the_options_are_json_booleans(study_a, coordinator, start):
    body = {"format": "jsonl", "include_pilot": True, "include_free_text": True}

    response = start(coordinator, study_a.slug, body)

    assert response.status_code == 202
    job = ExportJob.objects.get()
    assert (job.format, job.include_pilot, job.include_free_text) == ("jsonl", True, True)
    assert response.json()["include_free_text"] is True


def test_a_body_that_is_no_object_is_refused(study_a, coordinator, start):
    response = start(coordinator, study_a.slug, ["csv"])

    assert response.status_code == 400
    assert not ExportJob.objects.exists()


def test_a_read_only_token_starts_nothing(study_a, api_as, start):
    client = api_as("coordinator_a", [study_a], access=READ)

    responses = [
        start(client, study_a.slug, {"format": "csv"}),
        start(client, study_a.slug, {}, name="api:report_jobs"),
    ]

    assert [r.status_code for r in responses] == [403, 403]
    assert not ExportJob.objects.exists()


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "outsider"])
def test_only_the_study_coordinators_reach_its_exports(
    persona, populated, personas, study_a, api_as, start
):
    job = finished_job(study_a, personas)
    client = api_as(persona, [study_a])

    responses = [
        client.get(reverse("api:export_list", args=[study_a.slug])),
        start(client, study_a.slug, {"format": "csv"}),
        client.get(job_url(study_a, job)),
        client.get(job_url(study_a, job, "api:export_file")),
        client.get(reverse("api:report_jobs", args=[study_a.slug])),
    ]

    assert [r.status_code for r in responses] == [404] * 5
    assert ExportJob.objects.count() == 1
    assert not ExportEvent.objects.filter(kind="downloaded").exists()


def test_a_job_of_another_study_or_an_unknown_token_is_404(
    populated, personas, study_a, study_b, api_as
):
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=study_b, role=StudyMembership.Role.COORDINATOR
    )
    job = finished_job(study_a, personas)
    client = api_as("coordinator_a", [study_a, study_b])

    responses = [
        client.get(job_url(study_b, job)),
        client.get(job_url(study_b, job, "api:export_file")),
        client.get(reverse("api:export_job", args=[study_a.slug, "no-such-token"])),
    ]

    assert [r.status_code for r in responses] == [404] * 3
    assert all(r["Content-Type"] == PROBLEM for r in responses)
    assert not ExportEvent.objects.filter(kind="downloaded").exists()


def test_an_expired_job_or_a_lost_file_is_gone(populated, personas, coordinator, study_a):
    expired = finished_job(study_a, personas)
    ExportJob.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(hours=1))
    lost = finished_job(study_a, personas)
    lost.absolute_path.unlink()

    responses = [
        coordinator.get(job_url(study_a, job, "api:export_file")) for job in (expired, lost)
    ]

    assert [r.status_code for r in responses] == [410, 410]
    assert responses[0].json()["detail"].startswith("This export is no longer available.")
    assert coordinator.get(job_url(study_a, expired)).json()["download_url"] is None
    assert not ExportEvent.objects.filter(kind="downloaded").exists()


def test_a_file_outside_private_storage_is_never_served(
    populated, personas, coordinator, study_a, tmp_path
):
    job = finished_job(study_a, personas)
    outside = tmp_path / "secret.csv"
    outside.write_text("not yours")
    ExportJob.objects.filter(pk=job.pk).update(file_path="../secret.csv")

    response = coordinator.get(job_url(study_a, job, "api:export_file"))

    assert response.status_code == 410


def test_a_job_not_finished_yet_is_409(personas, coordinator, study_a):
    job = export_job_create(
        study=study_a, requested_by=personas["coordinator_a"], fmt="csv", dispatch=False
    )

    response = coordinator.get(job_url(study_a, job, "api:export_file"))
    status = coordinator.get(job_url(study_a, job)).json()

    assert response.status_code == 409
    assert response["Content-Type"] == PROBLEM
    assert "not ready yet" in response.json()["detail"]
    assert (status["status"], status["finished"], status["download_url"]) == ("queued", False, None)


def test_the_list_holds_exports_newest_first_and_no_reports(
    personas, coordinator, study_a, study_b
):
    def create(study, fmt):
        return export_job_create(
            study=study, requested_by=personas["coordinator_a"], fmt=fmt, dispatch=False
        )

    older, newer = create(study_a, "csv"), create(study_a, "xlsx")
    report = create(study_a, "report-html")
    create(study_b, "csv")

    exports = coordinator.get(reverse("api:export_list", args=[study_a.slug])).json()
    reports = coordinator.get(reverse("api:report_jobs", args=[study_a.slug])).json()

    assert [job["token"] for job in exports] == [newer.token, older.token]
    assert [job["token"] for job in reports] == [report.token]
    assert set(exports[0]) == {
        "token", "url", "format", "status", "status_label", "progress", "finished",
        "include_pilot", "include_free_text", "created_at", "finished_at", "expires_at",
        "file_size", "error", "download_url",
    }  # fmt: skip


def test_the_list_takes_as_many_queries_for_thirty_jobs_as_for_one(personas, coordinator, study_a):
    def listing():
        with CaptureQueriesContext(connection) as queries:
            response = coordinator.get(reverse("api:export_list", args=[study_a.slug]))
        assert response.status_code == 200
        return len(queries), len(response.json())

    def add(count):
        for _ in range(count):
            finished = ExportJob.objects.create(
                study=study_a,
                requested_by=personas["coordinator_a"],
                format="csv",
                status="succeeded",
                file_path="exports/x.csv",
                expires_at=timezone.now() + timedelta(days=1),
            )
            assert finished.is_downloadable

    add(1)
    one = listing()
    add(29)
    thirty = listing()

    assert (one[1], thirty[1]) == (1, 30)
    assert thirty[0] == one[0]
