"""The criterion study's tables of the replication package (data/): what the
csv-tables export does not hold, and the R sections need.

- criterion_transcripts.csv: every transcript the analysis reads, with the
  evaluation it belongs to (evaluation_id, as in evaluations.csv; empty for a
  transcript of a block outside the analysed sample, e.g. a pilot's, whose
  annotations still count in the annotators' agreement).
- criterion_annotations.csv: one row per annotator's value of one measure on
  one transcript.
- criterion_systems.csv: the study's systems in the joint-use table's order,
  each with its automated results (one row per result; a system without one
  has a row with empty result cells).

Nothing here identifies anyone: transcripts are numbered for this package
only (their platform code is the key that joins exports), and annotators,
whose names in the imported files may be real names, become annotator-1,
annotator-2, ... in the alphabetical order of those names, so that the R
code breaks ties between annotator panels as the platform does. Each table
is read with one query, however many rows.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import OuterRef, Subquery

from criterion.joint_use.table import latest_per_benchmark
from criterion.models import Annotation, AutomatedResult
from exports.dataset_types import ExportDataset
from exports.rows import evaluation_number
from surveys.models import LLMSystem, Study, Transcript
from surveys.selection import submitted_evaluations

TRANSCRIPTS = "criterion_transcripts.csv"
ANNOTATIONS = "criterion_annotations.csv"
SYSTEMS = "criterion_systems.csv"


def _csv(header: Iterable[str], rows: Iterable[Iterable[Any]]) -> str:
    """A table as the csv-tables export writes one: None as an empty cell."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if value is None else value for value in row])
    return out.getvalue()


def _sample(study: Study, dataset: ExportDataset) -> dict[int, int]:
    """transcript pk -> evaluation_id of the evaluations the criterion analysis
    reads (criterion.dataset.criterion_rows: non-pilot, submitted, scored, with
    a transcript) whose session is in this export."""
    transcript = Transcript.objects.filter(
        interaction__session_id=OuterRef("session_id"), interaction__block=OuterRef("block")
    ).values("pk")[:1]
    rows = (
        submitted_evaluations(study, dataset.as_of, include_pilot=False)
        .filter(scored_at__isnull=False, shs__isnull=False)
        .annotate(transcript_pk=Subquery(transcript))
        .filter(transcript_pk__isnull=False)
        .values_list("transcript_pk", "session_id", "block")
    )
    return {
        transcript_pk: evaluation_number(dataset.sessions[session_pk].session_id, block)
        for transcript_pk, session_pk, block in rows
        if session_pk in dataset.sessions
    }


def annotator_numbers(names: Iterable[str]) -> dict[str, int]:
    """name -> 1, 2, ... in the alphabetical order of the study's annotators'
    names (as the platform orders annotator panels). The package's data and its
    report (criterion.replication.scrub) both name annotator k `pseudonym(k)`,
    so that the report's panels name the data's annotators."""
    return {name: position for position, name in enumerate(sorted(set(names)), 1)}


def pseudonym(number: int) -> str:
    return f"annotator-{number}"


def annotation_files(study: Study, dataset: ExportDataset, report: Mapping) -> dict[str, str]:
    """criterion_transcripts.csv and criterion_annotations.csv (the module says what they hold)."""
    sample = _sample(study, dataset)
    annotations = list(
        Annotation.objects.filter(imported_in__study=study)
        .order_by()
        .values_list("transcript_id", "transcript__code", "measure", "annotator", "value")
    )
    # The transcripts of the sample in evaluation order, then the others in the
    # order of their random codes: the numbering carries nothing of the platform's.
    others = sorted({(code, pk) for pk, code, *_ in annotations if pk not in sample})
    ordered = sorted(sample, key=sample.__getitem__) + [pk for _code, pk in others]
    number = {pk: position for position, pk in enumerate(ordered, start=1)}
    annotator = annotator_numbers(name for *_, name, _value in annotations)
    transcripts = _csv(
        ("transcript", "evaluation_id"), ((number[pk], sample.get(pk)) for pk in ordered)
    )
    rows = sorted(
        (
            (number[pk], measure, annotator[name], value, sample.get(pk))
            for pk, _code, measure, name, value in annotations
        ),
        key=lambda row: row[:3],
    )
    values = _csv(
        ("transcript", "evaluation_id", "measure", "annotator", "value"),
        (
            (transcript, evaluation, measure, pseudonym(position), repr(float(value)))
            for transcript, measure, position, value, evaluation in rows
        ),
    )
    return {TRANSCRIPTS: transcripts, ANNOTATIONS: values}


def system_files(study: Study, dataset: ExportDataset, report: Mapping) -> dict[str, str]:
    """criterion_systems.csv: the joint-use table's systems, at their place in
    it (position), by name as in evaluations.csv's system column (the only
    mark of an evaluation's system there; unique within a study), and the most
    recent result of each benchmark, the one the table shows."""
    results: dict[int, list[AutomatedResult]] = {}
    for result in AutomatedResult.objects.filter(system__study=study).order_by():
        results.setdefault(result.system_id, []).append(result)
    rows: list[tuple] = []
    for position, system in enumerate(LLMSystem.objects.filter(study=study).order_by("name", "pk")):
        latest = latest_per_benchmark(results.get(system.pk, []))
        rows.extend(_system_row(position, system.name, result) for result in latest)
        if not latest:
            rows.append((position, system.name, None, None, None, None, None))
    header = ("position", "system", "benchmark", "score", "scale_min", "scale_max")
    return {SYSTEMS: _csv((*header, "higher_is_better"), rows)}


def _system_row(position: int, name: str, result: AutomatedResult) -> tuple:
    return (
        position,
        name,
        result.benchmark,
        repr(result.score),
        repr(result.scale_min),
        repr(result.scale_max),
        int(result.higher_is_better),
    )
