"""An export with transcripts issues the same number of queries however many
transcripts and turns the study has (docs/design/transcripts.md §10.6)."""

import pytest

from surveys.models import Turn
from tests.exports.factories import make_experimenters, populate_study
from tests.exports.test_queries import queries_of_export
from tests.exports.transcript_factory import add_transcripts


@pytest.mark.parametrize("fmt", ["xlsx", "json", "csv-tables", "csv", "jsonl"])
def test_query_count_does_not_grow_with_transcripts_or_turns(personas, study_a, study_b, fmt):
    populate_study(study_a, sessions=2, seed=1)
    few = len(add_transcripts(study_a))
    populate_study(study_b, sessions=30, seed=2, experimenters=make_experimenters(study_b, tag="b"))
    many = len(add_transcripts(study_b))
    assert (
        many > 5 * few
        and Turn.objects.filter(transcript__interaction__session__study=study_b).count() > 500
    )

    small = queries_of_export(study_a, fmt, include_free_text=True)
    large = queries_of_export(study_b, fmt, include_free_text=True)

    assert small == large
    assert small < 60
