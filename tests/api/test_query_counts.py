"""Every read costs a fixed number of queries, whatever the study's size
(docs/design/api.md §16.4): counted for a small study, then for a larger one."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from surveys.models import LLMSystem, StudyMembership
from tests.exports.factories import make_experimenters, populate_study
from tests.personas import make_study, make_user

STUDY_READS = ["", "systems/", "team/", "progress/", "quality/"]


def _queries(api, path: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = api.get(path)
    assert response.status_code == 200, response.content
    return len(queries)


def _grow(study, number: int) -> None:
    experimenters = make_experimenters(study, tag=f"-{number}")
    populate_study(study, sessions=number, seed=number, extras=False, experimenters=experimenters)
    for n in range(number):
        LLMSystem.objects.create(study=study, name=f"Extra {number}-{n}")
        StudyMembership.objects.create(
            user=make_user(f"member-{number}-{n}@example.org"),
            study=study,
            role=StudyMembership.Role.EXPERIMENTER,
        )


@pytest.mark.parametrize("path", STUDY_READS)
def test_a_study_read_costs_the_same_queries_at_any_size(api_as, study_a, path):
    api = api_as("coordinator_a", [study_a])
    url = f"/api/v1/studies/study-a/{path}"
    _grow(study_a, 2)
    small = _queries(api, url)
    _grow(study_a, 12)
    assert _queries(api, url) == small


def test_the_list_of_studies_costs_the_same_queries_for_many(api_as, study_a, personas):
    coordinator = personas["coordinator_a"]
    api = api_as("coordinator_a", [study_a])
    small = _queries(api, "/api/v1/studies/")
    more = [make_study(f"more-{n}", systems=1, languages=("en",)) for n in range(8)]
    for study in more:
        StudyMembership.objects.create(
            user=coordinator, study=study, role=StudyMembership.Role.COORDINATOR
        )
    api = api_as("coordinator_a", [study_a, *more])
    assert _queries(api, "/api/v1/studies/") == small
    assert len(api.get("/api/v1/studies/").json()) == 9


def test_the_research_lists_cost_the_same_queries_for_many_rows(api_as, study_a, personas):
    from datetime import date

    from criterion.models import AnnotationImport, AutomatedResult

    system = study_a.systems.first()
    api = api_as("coordinator_a", [study_a])
    lists = [
        "/api/v1/studies/study-a/annotations/",
        f"/api/v1/studies/study-a/systems/{system.pk}/automated-results/",
    ]

    def add(number: int) -> None:
        for n in range(number):
            AnnotationImport.objects.create(
                study=study_a, annotator=f"a{number}-{n}", file_name="f.csv",
                file_sha256="0" * 64, rows=1, imported_by=personas["coordinator_a"],
            )  # fmt: skip
            AutomatedResult.objects.create(
                system=system, benchmark=f"Bench {number}-{n}", score=0.5,
                measured_on=date(2026, 1, 1 + n), source="test",
            )  # fmt: skip

    add(1)
    small = [_queries(api, url) for url in lists]
    add(20)
    assert [_queries(api, url) for url in lists] == small
