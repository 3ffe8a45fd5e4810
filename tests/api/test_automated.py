"""Automated factuality results through the API (docs/design/api.md §16.4,
docs/design/criterion.md §13.4): every member reads a system's results, the
coordinators record one through the page's form; nothing else changes."""

from datetime import date, timedelta

import pytest
from django.utils import timezone

from audit.models import AuditEntry
from criterion.models import AutomatedResult
from tests.api.conftest import READ
from tests.criterion.test_joint_use_table import record

GOOD = {
    "benchmark": "FActScore",
    "score": 0.82,
    "scale_min": 0,
    "scale_max": 1,
    "higher_is_better": True,
    "measured_on": "2026-01-15",
    "source": "own run on the fixed task set",
}


def url(study, system) -> str:
    return f"/api/v1/studies/{study.slug}/systems/{system.pk}/automated-results/"


@pytest.fixture
def system_a(study_a):
    return study_a.systems.order_by("name").first()


def post(api, study, system, body):
    return api.post(url(study, system), body, content_type="application/json")


def test_a_coordinator_records_a_result_as_the_page_does(api_as, personas, study_a, system_a):
    # Given a coordinator's read-write token
    api = api_as("coordinator_a", [study_a])
    before = AuditEntry.objects.count()

    # When they record a result
    response = post(api, study_a, system_a, GOOD)

    # Then it is stored with who recorded it and when, and answered with 201
    assert response.status_code == 201, response.content
    stored = AutomatedResult.objects.get()
    assert (stored.system, stored.benchmark, stored.score) == (system_a, "FActScore", 0.82)
    assert (stored.scale_min, stored.scale_max, stored.higher_is_better) == (0.0, 1.0, True)
    assert stored.measured_on == date(2026, 1, 15)
    assert stored.recorded_by == personas["coordinator_a"]
    assert timezone.now() - stored.recorded_at < timedelta(minutes=1)
    body = response.json()
    assert body["id"] == stored.pk and body["in_report"] is True
    assert body["measured_on"] == "2026-01-15"
    # And the call is the one audit row: the page writes none for a result
    kinds = list(AuditEntry.objects.order_by("pk")[before:].values_list("kind", flat=True))
    assert kinds == [AuditEntry.Kind.API_TOKEN_USED]


def test_fields_left_out_take_the_pages_initial_values(api_as, study_a, system_a):
    api = api_as("coordinator_a", [study_a])
    body = {key: GOOD[key] for key in ("benchmark", "score", "measured_on", "source")}

    response = post(api, study_a, system_a, body)

    assert response.status_code == 201, response.content
    stored = AutomatedResult.objects.get()
    assert (stored.scale_min, stored.scale_max, stored.higher_is_better) == (0.0, 1.0, True)


def test_lower_is_better_is_said_with_false(api_as, study_a, system_a):
    api = api_as("coordinator_a", [study_a])
    body = {**GOOD, "score": 12, "scale_max": 100, "higher_is_better": False}

    assert post(api, study_a, system_a, body).status_code == 201
    assert AutomatedResult.objects.get().higher_is_better is False


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"score": 1.5}, "score", "The score must lie on its scale, from 0.0 to 1.0."),
        ({"scale_max": 0}, "scale_max", "The scale maximum must be above its minimum."),
        ({"measured_on": "2999-01-01"}, "measured_on", "The date is in the future."),
        ({"benchmark": ""}, "benchmark", "This field is required."),
        ({"score": "many"}, "score", "Enter a number."),
        ({"score": [0.5]}, "score", "Enter a single value, not a list or an object."),
    ],
)
def test_refused_input_names_the_field_in_the_forms_words(
    api_as, study_a, system_a, change, field, message
):
    api = api_as("coordinator_a", [study_a])

    response = post(api, study_a, system_a, {**GOOD, **change})

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["detail"] == "Nothing was stored: the request has errors."
    assert {"field": field, "message": message} in problem["errors"]
    assert not AutomatedResult.objects.exists()


def test_a_body_that_is_not_an_object_is_refused(api_as, study_a, system_a):
    response = post(api_as("coordinator_a", [study_a]), study_a, system_a, [GOOD])

    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] is None
    assert not AutomatedResult.objects.exists()


def test_every_member_reads_with_what_the_report_shows(api_as, study_a, system_a):
    # Given two results on one benchmark and one on another
    old = record(system_a, 0.5, day=date(2025, 6, 1))
    new = record(system_a, 0.7, day=date(2026, 1, 15))
    other = record(system_a, 12, high=100, higher_is_better=False, benchmark="HaluEval")

    # When an experimenter reads them
    response = api_as("experimenter_a", [study_a]).get(url(study_a, system_a))

    # Then in the page's order, the latest of each benchmark marked as in the report
    assert response.status_code == 200
    rows = [(row["id"], row["in_report"]) for row in response.json()]
    assert rows == [(new.pk, True), (old.pk, False), (other.pk, True)]
    assert response.json()[2]["higher_is_better"] is False


def test_an_experimenter_cannot_record_one(api_as, study_a, system_a):
    response = post(api_as("experimenter_a", [study_a]), study_a, system_a, GOOD)

    assert response.status_code == 404  # as the page's form answers them
    assert not AutomatedResult.objects.exists()


def test_a_read_only_token_reads_but_records_nothing(api_as, study_a, system_a):
    api = api_as("coordinator_a", [study_a], access=READ)

    assert api.get(url(study_a, system_a)).status_code == 200
    response = post(api, study_a, system_a, GOOD)

    assert response.status_code == 403
    assert not AutomatedResult.objects.exists()


def test_a_system_of_another_study_is_not_found(api_as, study_a, study_b):
    api = api_as("coordinator_a", [study_a])
    system_b = study_b.systems.first()
    record(system_b, 0.5)

    assert api.get(url(study_a, system_b)).status_code == 404
    assert post(api, study_a, system_b, GOOD).status_code == 404
    assert AutomatedResult.objects.count() == 1


def test_another_studys_coordinator_is_not_let_in(api_as, study_a, study_b, system_a):
    # Their token cannot name study A: it reaches only their own studies
    api = api_as("coordinator_b", [study_a, study_b])

    assert api.get(url(study_a, system_a)).status_code == 404
    assert post(api, study_a, system_a, GOOD).status_code == 404
    assert not AutomatedResult.objects.exists()
