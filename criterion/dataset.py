"""The criterion-validity study's data (docs/design/criterion.md §13.2): the annotators'
values per transcript, and each rated block's SHS beside the mean of its
objective measures, as the analysis of paper 8.2 reads them.

The ratings are the study report's sample (surveys.selection.submitted_evaluations,
non-pilot, submitted) restricted to scored evaluations whose block has a
transcript: without a transcript there is nothing an annotator could have
measured. Every function here reads a fixed number of queries, however many
transcripts, annotators and measures there are.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from statistics import fmean

from django.db.models import OuterRef, Subquery
from django.utils import timezone

from criterion.models import DETECTOR_PREFIX, Annotation, Measure
from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.validity.criterion import CriterionRow
from surveys.models import Study, Transcript
from surveys.selection import submitted_evaluations


def _annotations(study: Study):
    return Annotation.objects.filter(imported_in__study=study).order_by()


def transcript_measures(study: Study) -> dict[str, dict[str, dict[str, float]]]:
    """transcript code -> measure -> annotator -> value, for every stored value."""
    measures: dict = defaultdict(lambda: defaultdict(dict))
    rows = _annotations(study).values_list("transcript__code", "measure", "annotator", "value")
    for code, measure, annotator, value in rows:
        measures[code][measure][annotator] = value
    return {code: dict(by_measure) for code, by_measure in measures.items()}


def ratings(measures: dict[str, dict[str, dict[str, float]]], measure: str) -> dict:
    """transcript code -> annotator -> value of one measure, from `transcript_measures`:
    the reliability data of the agreement statistics (a transcript no annotator
    gave this measure is absent)."""
    return {code: by[measure] for code, by in measures.items() if measure in by}


def criterion_rows(
    study: Study, measures: dict | None = None, *, as_of: datetime | None = None
) -> list[CriterionRow]:
    """One row per scored non-pilot evaluation whose block has a transcript,
    submitted by `as_of` (now by default; the report's moment when it builds
    the section): its SHS and dimension scores, and per measure the mean over
    the annotators who gave one (None when none did). Two queries, one when
    `measures` (what `transcript_measures` returned) is given."""
    transcript = Transcript.objects.filter(
        interaction__session_id=OuterRef("session_id"), interaction__block=OuterRef("block")
    ).values("code")[:1]
    dimension_columns = [f"s_{key}" for key in DIMENSION_KEYS]
    evaluations = (
        submitted_evaluations(study, as_of or timezone.now(), include_pilot=False)
        .filter(scored_at__isnull=False, shs__isnull=False)
        .annotate(transcript_code=Subquery(transcript))
        .filter(transcript_code__isnull=False)
        .order_by("session__created_at", "session_id", "block")
        .values_list("session_id", "transcript_code", "shs", *dimension_columns)
    )
    if measures is None:
        measures = transcript_measures(study)
    return [
        _row(session_id, shs, scores, measures.get(code, {}))
        for session_id, code, shs, *scores in evaluations
    ]


def _row(session_id: int, shs: float, scores: list, measures: dict) -> CriterionRow:
    means = {measure: fmean(by_annotator.values()) for measure, by_annotator in measures.items()}
    return CriterionRow(
        participant=str(session_id),
        shs=shs,
        dimensions=dict(zip(DIMENSION_KEYS, scores, strict=True)),
        factual_precision=means.get(Measure.FACTUAL_PRECISION.value),
        citation_support=means.get(Measure.CITATION_SUPPORT.value),
        presentation=means.get(Measure.PRESENTATION.value),
        detectors={
            measure.removeprefix(DETECTOR_PREFIX): mean
            for measure, mean in sorted(means.items())
            if measure.startswith(DETECTOR_PREFIX)
        },
    )
