"""The feedback and demographics tables hold what was submitted by the
export's moment, as every other table does (docs/design/exports.md §7.2):
the replication package's data and report are counted at one moment."""

from datetime import timedelta

from django.utils import timezone

from exports.dataset import build_dataset
from surveys.models import DemographicsResponse, FeedbackResponse
from tests.exports.factories import populate_study


def test_a_questionnaire_submitted_after_the_moment_is_not_in_the_export(personas, study_a):
    populate_study(study_a, sessions=3, extras=False)
    as_of = timezone.now()
    later = as_of + timedelta(seconds=5)
    FeedbackResponse.objects.filter(pk=FeedbackResponse.objects.first().pk).update(
        submitted_at=later
    )
    DemographicsResponse.objects.filter(pk=DemographicsResponse.objects.first().pk).update(
        submitted_at=later
    )

    dataset = build_dataset(
        study=study_a, include_pilot=False, include_free_text=False, as_of=as_of
    )

    assert dataset.tables["feedback"].count == FeedbackResponse.objects.count() - 1
    assert len(list(dataset.tables["feedback"].rows())) == FeedbackResponse.objects.count() - 1
    assert dataset.tables["demographics"].count == DemographicsResponse.objects.count() - 1
