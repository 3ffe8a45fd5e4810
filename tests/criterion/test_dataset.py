"""The criterion study's data (docs/design/criterion.md §13.2): annotations per transcript,
the annotator matrix, and each scored rating beside the annotators' mean."""

import random

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from criterion.annotations.services import annotations_import
from criterion.dataset import criterion_rows, ratings, transcript_measures
from scoring.instruments.shs import DIMENSION_KEYS
from surveys.models import Evaluation, Transcript
from tests.criterion.annotation_data import csv_bytes, study_with_transcripts


def annotate(study, user, *, seed: int = 5) -> list[tuple]:
    """Two annotators' factual precision of every transcript, one annotator's citation
    support of half of them, and a detector; imported as one file."""
    rng = random.Random(seed)
    codes = sorted(
        Transcript.objects.filter(interaction__session__study=study).values_list("code", flat=True)
    )
    rows = []
    for number, code in enumerate(codes):
        for annotator in ("ann1", "ann2"):
            rows.append((code, annotator, "factual_precision", round(rng.random(), 3)))
            rows.append((code, annotator, "detector:semantic_entropy", round(rng.gauss(0, 2), 3)))
        if number % 2:
            rows.append((code, "ann1", "citation_support", round(rng.random(), 3)))
    annotations_import(study=study, data=csv_bytes(rows), file_name="all.csv", user=user)
    return rows


@pytest.fixture
def annotated(personas, study_a):
    study_with_transcripts(study_a, sessions=5)
    return annotate(study_a, personas["coordinator_a"])


def rounded(value):
    return None if value is None else round(value, 12)


def test_criterion_rows_mean_over_annotators(annotated, study_a):
    # given every transcript annotated by two annotators
    rows = criterion_rows(study_a)

    # the expected rows, worked out here without the function's queries
    expected = []
    ratings = Evaluation.objects.filter(
        session__study=study_a,
        session__is_pilot=False,
        submitted_at__isnull=False,
        scored_at__isnull=False,
    )
    for evaluation in ratings:
        code = (
            Transcript.objects.filter(
                interaction__session=evaluation.session, interaction__block=evaluation.block
            )
            .values_list("code", flat=True)
            .first()
        )
        if code is None:
            continue

        def mean(measure, code=code):
            values = [v for c, _a, m, v in annotated if c == code and m == measure]
            return rounded(float(np.mean(values))) if values else None

        expected.append(
            (
                str(evaluation.session_id),
                evaluation.shs,
                tuple(getattr(evaluation, f"s_{key}") for key in DIMENSION_KEYS),
                mean("factual_precision"),
                mean("citation_support"),
                (("semantic_entropy", mean("detector:semantic_entropy")),),
            )
        )
    got = [
        (
            row.participant,
            row.shs,
            tuple(row.dimensions[key] for key in DIMENSION_KEYS),
            rounded(row.factual_precision),
            rounded(row.citation_support),
            tuple((name, rounded(value)) for name, value in row.detectors.items()),
        )
        for row in rows
    ]

    assert sorted(got, key=repr) == sorted(expected, key=repr)
    assert len(rows) >= 8 and all(list(row.dimensions) == list(DIMENSION_KEYS) for row in rows)
    # the unscored rating, the pilot's and the blocks without a transcript are not rows
    assert len(rows) < Evaluation.objects.filter(session__study=study_a).count()
    assert any(row.citation_support is None for row in rows)
    assert any(row.citation_support is not None for row in rows)


def test_rows_without_annotations_have_no_measures(personas, study_a):
    study_with_transcripts(study_a, sessions=2)
    rows = criterion_rows(study_a)
    assert rows and all(
        r.factual_precision is None and r.citation_support is None and r.detectors == {}
        for r in rows
    )


def test_transcript_measures_and_ratings(annotated, study_a):
    measures = transcript_measures(study_a)
    for code, annotator, measure, value in annotated:
        assert measures[code][measure][annotator] == value
    assert sum(len(a) for m in measures.values() for a in m.values()) == len(annotated)

    support = ratings(measures, "citation_support")
    assert {a for by in support.values() for a in by} == {"ann1"}
    assert {c: by["ann1"] for c, by in support.items()} == {
        c: v for c, a, m, v in annotated if m == "citation_support"
    }
    precision = ratings(measures, "factual_precision")
    assert all(set(by) == {"ann1", "ann2"} for by in precision.values())


def test_another_studys_annotations_stay_out(annotated, personas, study_a, study_b):
    study_with_transcripts(study_b, sessions=1, tag="b")
    annotate(study_b, personas["coordinator_b"], seed=9)
    codes_a = set(
        Transcript.objects.filter(interaction__session__study=study_a).values_list(
            "code", flat=True
        )
    )
    assert set(transcript_measures(study_a)) <= codes_a
    assert set(ratings(transcript_measures(study_a), "factual_precision")) <= codes_a


def queries_of(function, *args) -> int:
    with CaptureQueriesContext(connection) as queries:
        function(*args)
    return len(queries)


def test_query_counts_do_not_grow(personas, study_a, study_b):
    study_with_transcripts(study_a, sessions=1, seed=1)
    study_with_transcripts(study_b, sessions=10, seed=2, tag="b")
    annotate(study_a, personas["coordinator_a"])
    annotate(study_b, personas["coordinator_b"])

    assert len(criterion_rows(study_b)) > 4 * len(criterion_rows(study_a))
    for function, args in [
        (criterion_rows, ()),
        (transcript_measures, ()),
    ]:
        assert queries_of(function, study_a, *args) == queries_of(function, study_b, *args) <= 2


def test_a_registered_presentation_measure_reaches_h3(personas, study_a):
    # The stronger form of H3: annotators rate each transcript's presentation, the
    # pre-registration names it, and H3 regresses on its mean over annotators.
    from criterion.preregistration.services import save_version
    from criterion.report import criterion_report

    study_with_transcripts(study_a, sessions=8)
    rng = random.Random(2)
    codes = sorted(
        Transcript.objects.filter(interaction__session__study=study_a).values_list(
            "code", flat=True
        )
    )
    rows = [
        (code, annotator, measure, round(rng.random(), 3))
        for code in codes
        for annotator in ("ann1", "ann2")
        for measure in ("factual_precision", "presentation")
    ]
    annotations_import(
        study=study_a, data=csv_bytes(rows), file_name="p.csv", user=personas["coordinator_a"]
    )
    save_version(study_a, {"h3_predictor": "presentation"}, personas["coordinator_a"])
    by_code = {
        code: [v for c, _, m, v in rows if c == code and m == "presentation"] for code in codes
    }
    stored = [row.presentation for row in criterion_rows(study_a)]
    assert stored and all(value is not None for value in stored)
    means = {rounded(float(np.mean(values))) for values in by_code.values()}
    assert {rounded(value) for value in stored} <= means
    report = criterion_report(study_a)
    h3 = report["analysis"]["h3"]
    assert h3["predictor"] == "presentation" and h3["n"] == len(stored)
    assert [c["measure"] for c in h3["criterion_agreement"]] == [
        "factual_precision",
        "presentation",
    ]
