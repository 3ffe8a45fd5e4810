"""The automated-results pages (docs/design/criterion.md §13.4): members read, coordinators
record, correct and delete; bad input is refused with nothing changed."""

from datetime import date, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from criterion.joint_use.forms import AutomatedResultForm
from criterion.models import AutomatedResult
from surveys.models import LLMSystem
from tests.criterion.test_joint_use_table import record

GOOD = {
    "benchmark": "FActScore",
    "score": "0.82",
    "scale_min": "0",
    "scale_max": "1",
    "higher_is_better": "on",
    "measured_on": "2026-01-15",
    "source": "own run on the fixed task set",
}


def list_url(study):
    return reverse("criterion:automated_results", args=[study.slug])


def create_url(study, system):
    return reverse("criterion:automated_result_create", args=[study.slug, system.pk])


def edit_url(study, result):
    return reverse("criterion:automated_result_edit", args=[study.slug, result.pk])


def delete_url(study, result):
    return reverse("criterion:automated_result_delete", args=[study.slug, result.pk])


@pytest.fixture
def system_a(study_a):
    return study_a.systems.order_by("name").first()


@pytest.fixture
def result_a(system_a):
    return record(system_a, 0.7)


def test_the_list_has_its_slug_based_address(study_a):
    assert list_url(study_a) == "/studies/study-a/criterion/automated-results/"


@pytest.mark.parametrize("persona", ["outsider", "coordinator_b"])
def test_non_members_get_404_everywhere(client_for, study_a, system_a, result_a, persona):
    client = client_for(persona)
    for url in (
        list_url(study_a),
        create_url(study_a, system_a),
        edit_url(study_a, result_a),
        delete_url(study_a, result_a),
    ):
        assert client.get(url).status_code == 404
    assert client.post(delete_url(study_a, result_a)).status_code == 404
    assert AutomatedResult.objects.filter(pk=result_a.pk).exists()


def test_anonymous_is_sent_to_log_in(client_for, study_a, result_a):
    response = client_for("anonymous").get(list_url(study_a))
    assert response.status_code == 302 and "login" in response["Location"]


def test_an_experimenter_reads_but_cannot_change(client_for, study_a, system_a, result_a):
    client = client_for("experimenter_a")

    page = client.get(list_url(study_a))

    assert page.status_code == 200
    assert "FActScore" in page.content.decode()
    assert edit_url(study_a, result_a) not in page.content.decode()
    assert create_url(study_a, system_a) not in page.content.decode()
    assert client.post(create_url(study_a, system_a), GOOD).status_code == 404
    assert client.post(edit_url(study_a, result_a), {**GOOD, "score": "0.1"}).status_code == 404
    assert client.post(delete_url(study_a, result_a)).status_code == 404
    result_a.refresh_from_db()
    assert result_a.score == 0.7


def test_a_coordinator_records_corrects_and_deletes(client_for, personas, study_a, system_a):
    client = client_for("coordinator_a")

    response = client.post(create_url(study_a, system_a), GOOD)

    assert response.status_code == 302
    result = AutomatedResult.objects.get()
    assert (result.system, result.score, result.measured_on) == (system_a, 0.82, date(2026, 1, 15))
    assert result.recorded_by == personas["coordinator_a"]
    page = client.get(list_url(study_a)).content.decode()
    assert edit_url(study_a, result) in page

    client.post(edit_url(study_a, result), {**GOOD, "score": "0.9"})
    result.refresh_from_db()
    assert result.score == 0.9

    assert client.get(delete_url(study_a, result)).status_code == 200
    assert AutomatedResult.objects.exists()  # a GET only asks
    client.post(delete_url(study_a, result))
    assert not AutomatedResult.objects.exists()


def test_a_system_or_result_of_another_study_is_404(client_for, study_a, study_b):
    client = client_for("coordinator_a")
    system_b = study_b.systems.first()
    result_b = record(system_b, 0.5)

    # Study A's addresses with study B's objects.
    assert client.post(create_url(study_a, system_b), GOOD).status_code == 404
    assert client.post(edit_url(study_a, result_b), GOOD).status_code == 404
    assert client.post(delete_url(study_a, result_b)).status_code == 404
    assert AutomatedResult.objects.filter(system__study__slug="study-a").count() == 0
    result_b.refresh_from_db()
    assert result_b.score == 0.5


TOMORROW = (timezone.localdate() + timedelta(days=1)).isoformat()


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"score": "1.2"}, "score", "The score must lie on its scale"),
        ({"score": "-0.1"}, "score", "The score must lie on its scale"),
        ({"scale_max": "0"}, "scale_max", "must be above its minimum"),
        ({"scale_min": "2", "scale_max": "1"}, "scale_max", "must be above its minimum"),
        ({"measured_on": TOMORROW}, "measured_on", "The date is in the future"),
        ({"score": "nan"}, "score", "Enter a number"),
        ({"score": ""}, "score", "This field is required"),
    ],
)
def test_bad_input_is_refused_and_nothing_changes(
    client_for, study_a, system_a, result_a, change, field, message
):
    client = client_for("coordinator_a")

    created = client.post(create_url(study_a, system_a), {**GOOD, **change})
    edited = client.post(edit_url(study_a, result_a), {**GOOD, **change})

    for response in (created, edited):
        assert response.status_code == 200
        assert field in response.context["form"].errors
        assert message in response.content.decode()
    assert AutomatedResult.objects.count() == 1
    result_a.refresh_from_db()
    assert (result_a.score, result_a.benchmark, result_a.source) == (0.7, "FActScore", "own run")


@pytest.mark.parametrize("field", ["benchmark", "source"])
def test_a_nul_character_is_refused(client_for, study_a, system_a, result_a, field):
    # The platform's middleware answers 400 before the view; the form refuses
    # it too, for any other caller.
    client = client_for("coordinator_a")
    bad = {**GOOD, field: "Fact\x00Score"}

    assert client.post(create_url(study_a, system_a), bad).status_code == 400
    assert client.post(edit_url(study_a, result_a), bad).status_code == 400
    form = AutomatedResultForm(bad, instance=AutomatedResult(system=system_a))
    assert not form.is_valid() and "Null characters are not allowed" in str(form.errors[field])
    assert AutomatedResult.objects.count() == 1
    result_a.refresh_from_db()
    assert (result_a.benchmark, result_a.source) == ("FActScore", "own run")


def test_todays_date_is_accepted(client_for, study_a, system_a):
    today = timezone.localdate().isoformat()
    response = client_for("coordinator_a").post(
        create_url(study_a, system_a), {**GOOD, "measured_on": today}
    )
    assert response.status_code == 302


def _page_queries(client, study) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(list_url(study)).status_code == 200
    return len(captured)


def test_the_list_page_reads_a_fixed_number_of_queries(client_for, study_a):
    client = client_for("coordinator_a")
    systems = list(study_a.systems.all())
    record(systems[0], 0.5)
    small = _page_queries(client, study_a)
    for number in range(4):
        systems.append(LLMSystem.objects.create(study=study_a, name=f"Added {number}"))
    for number, system in enumerate(systems * 4):
        record(system, 0.5, benchmark=f"benchmark {number}")

    assert _page_queries(client, study_a) == small
