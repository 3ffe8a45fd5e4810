"""An export issues the same number of queries for 10 and for 100 evaluations."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from exports.models import ExportJob
from exports.runner import Outcome, export_job_run
from tests.exports.factories import make_experimenters, populate_study


def queries_of_export(study, fmt, **options) -> int:
    job = ExportJob.objects.create(study=study, format=fmt, **options)
    with CaptureQueriesContext(connection) as captured:
        assert export_job_run(job_id=job.pk) == Outcome.SUCCEEDED
    return len(captured)


@pytest.mark.parametrize(
    "fmt, options",
    [
        ("csv", {}),
        ("csv", {"include_free_text": True, "include_pilot": True}),
        ("csv-tables", {"include_free_text": True}),
        ("xlsx", {"include_free_text": True}),
        ("json", {}),
        ("sav-tables", {}),
        ("report-html", {}),
    ],
)
def test_query_count_does_not_grow_with_the_number_of_evaluations(
    personas, study_a, study_b, fmt, options
):
    # 32 complete evaluations (+ extras): enough for the report's validation
    # section (docs/design/validation-analysis.md §14.8), so both reports hold the same sections.
    populate_study(study_a, sessions=16, seed=1)
    populate_study(
        study_b, sessions=50, seed=2, experimenters=make_experimenters(study_b, tag="b")
    )  # 100

    small = queries_of_export(study_a, fmt, **options)
    large = queries_of_export(study_b, fmt, **options)

    assert small == large
    assert small < 60
