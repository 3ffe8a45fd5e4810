"""Simulated objective measures for the criterion-validity study (docs/design/criterion.md §13.5).

`simulate_study --annotators N` gives every block of its simulated sessions a
short transcript and draws, per transcript, what annotators would find in it
(paper 8.2): a factual-precision rate, a citation-support rate and a
semantic-entropy detector score, with a known population correlation between
the evaluation's overall SHS and the annotators' mean factual precision. The
values only exercise the analysis and its report: a simulated correlation is
what was put in, never evidence of what the SHS measures.

The draws are plain numpy (`measures.py`), so their statistics are checked
without a database; `transcripts.py` gives the blocks their transcripts, and
this module writes or stores what was drawn.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from criterion.models import Annotation, AnnotationImport, AutomatedResult
from criterion.simulation.measures import (
    AnnotationModel,
    annotation_rows,
    draw_measures,
    rows_csv,
)
from criterion.simulation.transcripts import transcripts_for_evaluations
from surveys.models import Evaluation

SIMULATED_FILE_NAME = "simulated"
SIMULATED_BENCHMARK = "Simulated factuality benchmark"


@dataclass
class CriterionSimulation:
    transcripts_created: int = 0
    transcripts_annotated: int = 0
    rows: int = 0
    imports: int = 0
    automated_results: int = 0
    observed_r: float | None = None
    # Why observed_r is None when annotations were drawn (said instead of "r = nan").
    r_not_computable: str = ""
    skipped_unscored: int = 0
    per_annotator: dict[str, int] = field(default_factory=dict)


def _scored_evaluations(sessions: QuerySet) -> tuple[list[Evaluation], int]:
    """The submitted, scored evaluations of the non-pilot sessions, in a fixed order."""
    evaluations = list(
        Evaluation.objects.submitted()
        .filter(session__in=sessions.filter(is_pilot=False))
        .select_related("session")
        .order_by("session_id", "block")
    )
    scored = [e for e in evaluations if e.shs is not None and e.s_SR is not None]
    return scored, len(evaluations) - len(scored)


def simulate_criterion_data(
    *,
    sessions: QuerySet,
    seed: int,
    annotators: int,
    correlation: float = 0.5,
    annotations_file: str | None = None,
    store_annotations: bool = False,
    automated_results: bool = False,
) -> CriterionSimulation:
    """Transcripts, annotations and automated results for the sessions' evaluations.

    Pilot sessions get nothing. The same sessions and seed give the same values.
    """
    model = AnnotationModel(correlation=correlation)
    result = CriterionSimulation()
    if annotators < 1 and not automated_results:
        return result
    evaluations, result.skipped_unscored = _scored_evaluations(sessions)
    if not evaluations:
        return result
    # Streams of their own (paper section 8.2), apart from the answers' stream of
    # the seed, and each apart from the others so one option does not shift another.
    rng, text_rng, benchmark_rng = (np.random.default_rng([seed, 82, k]) for k in range(3))
    measures = draw_measures(
        shs=np.array([e.shs for e in evaluations]),
        source_reliability=np.array([e.s_SR for e in evaluations]),
        annotators=max(annotators, 1),
        rng=rng,
        model=model,
    )
    with transaction.atomic():
        if annotators >= 1:
            _annotate(evaluations, measures, text_rng, annotations_file, store_annotations, result)
        if automated_results:
            result.automated_results = _store_automated_results(
                evaluations, measures, benchmark_rng
            )
    return result


def _annotate(evaluations, measures, text_rng, annotations_file, store, result) -> None:
    transcripts, result.transcripts_created = transcripts_for_evaluations(evaluations, text_rng)
    ids = [transcripts[(e.session_id, e.block)][0].code for e in evaluations]
    cites = [transcripts[(e.session_id, e.block)][1] for e in evaluations]
    rows = annotation_rows(ids, measures, cites=cites)
    result.transcripts_annotated, result.rows = len(ids), len(rows)
    result.observed_r, result.r_not_computable = _observed_r(
        evaluations, measures.precision.mean(axis=1)
    )
    for _, name, _, _ in rows:
        result.per_annotator[name] = result.per_annotator.get(name, 0) + 1
    if store:
        by_code = {t.code: t for t, _ in transcripts.values()}
        result.imports = _store_annotations(rows, by_code, evaluations[0].session.study_id)
    if annotations_file:
        # Last: a file that cannot be written rolls the stored rows back with it.
        with open(annotations_file, "w", encoding="utf-8", newline="") as handle:
            handle.write(rows_csv(rows))


def _observed_r(evaluations: list[Evaluation], precision: np.ndarray) -> tuple[float | None, str]:
    """Pearson r of the evaluations' SHS with their mean factual precision, or
    None and why not: two points always lie on a line (r = +-1 says nothing),
    and a constant has no correlation at all (numpy gives nan)."""
    shs = np.array([float(e.shs) for e in evaluations if e.shs is not None])
    if len({e.session_id for e in evaluations}) == 1:
        count = len(evaluations)
        return None, f"one participant ({count} evaluation{'' if count == 1 else 's'})"
    if len(shs) < 3:
        return None, f"only {len(shs)} evaluations, a correlation needs at least 3"
    if np.ptp(shs) == 0:
        return None, "every evaluation has the same SHS"
    if np.ptp(precision) == 0:
        return None, "every transcript has the same mean factual precision"
    return float(np.corrcoef(shs, precision)[0, 1]), ""


def _store_annotations(rows, transcripts_by_code, study_id: int) -> int:
    """One AnnotationImport per annotator, as if each had uploaded their own file."""
    names = sorted({name for _, name, _, _ in rows})
    for name in names:
        own = [row for row in rows if row[1] == name]
        audit = AnnotationImport.objects.create(
            study_id=study_id,
            annotator=name,
            file_name=SIMULATED_FILE_NAME,
            file_sha256=hashlib.sha256(rows_csv(own).encode("utf-8")).hexdigest(),
            rows=len(own),
        )
        Annotation.objects.bulk_create(
            Annotation(
                transcript=transcripts_by_code[code],
                imported_in=audit,
                annotator=name,
                measure=measure,
                value=value,
            )
            for code, _, measure, value in own
        )
    return len(names)


def _store_automated_results(evaluations, measures, rng: np.random.Generator) -> int:
    """Per system, a benchmark score near its transcripts' mean true precision:
    a fixed task set measures the same model, with its own sampling error."""
    by_system: dict[int, list[float]] = {}
    for evaluation, precision in zip(evaluations, measures.true_precision, strict=True):
        by_system.setdefault(evaluation.system_id, []).append(float(precision))
    today = timezone.localdate()
    for system_id in sorted(by_system):
        score = float(np.clip(np.mean(by_system[system_id]) + rng.normal(0, 0.03), 0, 1))
        AutomatedResult.objects.create(
            system_id=system_id,
            benchmark=SIMULATED_BENCHMARK,
            score=round(score, 3),
            measured_on=today,
            source="simulate_study (simulated, not a measurement)",
        )
    return len(by_system)
