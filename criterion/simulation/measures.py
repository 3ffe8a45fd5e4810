"""The draws of the simulated objective measures: plain numpy, no database
(docs/design/criterion.md §13.5), so their statistics are checked on any sample size."""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, ndtri

from criterion.models import DETECTOR_PREFIX

CSV_COLUMNS = ("transcript_id", "annotator", "measure", "value")
FACTUAL_PRECISION = "factual_precision"
CITATION_SUPPORT = "citation_support"
DETECTOR = f"{DETECTOR_PREFIX}semantic_entropy"
# Semantic entropy over ten sampled answers lies between 0 and ln 10 nats.
_MAX_ENTROPY = float(np.log(10))


class AnnotationSimulationError(ValueError):
    """The options ask for something the model cannot give; nothing was written."""


@dataclass(frozen=True)
class AnnotationModel:
    """How the objective measures relate to the ratings, on logit scales.

    True factual precision is expit(location + spread * L), L a standard-normal
    latent correlated with the standardised overall SHS. Each annotator adds a
    bias of their own and noise per transcript, sized so that two annotators'
    values have an intraclass correlation of about `icc`.
    """

    correlation: float = 0.5  # target r(overall SHS, annotators' mean factual precision)
    icc: float = 0.8
    # Median precision .73, 90% of transcripts between .37 and .92 (FActScore's range).
    location: float = 1.0
    spread: float = 0.9
    annotator_bias_sd: float = 0.15
    # Citation support follows the Source Reliability rating (hypothesis H2).
    citation_on_sr: float = 0.55
    citation_location: float = 0.6
    # The detector sees the model's uncertainty: lower precision, higher entropy.
    detector_on_precision: float = 0.6

    @property
    def noise_sd(self) -> float:
        return self.spread * float(np.sqrt((1 - self.icc) / self.icc))


@dataclass
class SimulatedMeasures:
    """Per transcript (rows) and annotator (columns); the detector once per transcript."""

    true_precision: np.ndarray
    precision: np.ndarray
    citation: np.ndarray
    detector: np.ndarray


_CALIBRATION_DRAWS = 50_000


def _observed_r(rho: float, draws: tuple[np.ndarray, ...], model: AnnotationModel) -> float:
    z, unique, noise = draws
    latent = rho * z + np.sqrt(1 - rho**2) * unique
    values = expit(model.location + model.spread * latent[:, None] + noise)
    return float(np.corrcoef(z, values.mean(axis=1))[0, 1])


@functools.lru_cache(maxsize=32)
def latent_correlation(model: AnnotationModel, annotators: int) -> float:
    """The correlation of the latent with SHS that lands the observed one at the target.

    The bounded transform and the annotators' noise both attenuate: with the
    defaults the observed r is about .92 of the latent's with two annotators
    (a target of .5 needs .54) and .87 with one (.57). Solved by bisection on
    fixed draws: the answer depends on the model, never on the seed.
    """
    target = abs(model.correlation)
    if target == 0:
        return 0.0
    # Normal quantiles, shuffled and made exactly uncorrelated with SHS: far less
    # error than as many random draws.
    rng = np.random.default_rng(0)
    quantiles = ndtri((np.arange(_CALIBRATION_DRAWS) + 0.5) / _CALIBRATION_DRAWS)

    def independent() -> np.ndarray:
        shuffled = rng.permutation(quantiles)
        shuffled -= quantiles * (shuffled @ quantiles) / (quantiles @ quantiles)
        return shuffled / shuffled.std()

    noise = np.column_stack([independent() for _ in range(annotators)])
    draws = (quantiles, independent(), noise * model.noise_sd)
    reachable = _observed_r(1.0, draws, model)
    if target >= reachable:
        raise AnnotationSimulationError(
            f"--annotation-correlation {model.correlation} is beyond what {annotators} "
            f"annotator(s) with this noise can show (at most {reachable:.2f})"
        )
    low, high = 0.0, 1.0
    for _ in range(25):
        middle = (low + high) / 2
        low, high = (middle, high) if _observed_r(middle, draws, model) < target else (low, middle)
    return float(np.copysign((low + high) / 2, model.correlation))


def _standardised(values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    sd = values.std(ddof=1) if len(values) > 1 else 0.0
    return (values - values.mean()) / sd if sd > 0 else np.zeros_like(values)


def draw_measures(
    *,
    shs: np.ndarray,
    source_reliability: np.ndarray,
    annotators: int,
    rng: np.random.Generator,
    model: AnnotationModel = AnnotationModel(),
) -> SimulatedMeasures:
    """The measures of n transcripts, from their evaluations' overall SHS and SR scores."""
    if annotators < 1:
        raise AnnotationSimulationError("annotations need at least one annotator")
    z = _standardised(shs)
    n = len(z)
    rho = latent_correlation(model, annotators)
    latent = rho * z + np.sqrt(1 - rho**2) * rng.standard_normal(n)
    bias = rng.normal(0.0, model.annotator_bias_sd, annotators)
    noise = rng.normal(0.0, model.noise_sd, (n, annotators))
    true_logit = model.location + model.spread * latent
    precision = expit(true_logit[:, None] + bias + noise)
    weight = model.citation_on_sr
    citation_latent = weight * _standardised(source_reliability) + np.sqrt(
        1 - weight**2
    ) * rng.standard_normal(n)
    citation_noise = rng.normal(0.0, model.noise_sd, (n, annotators))
    citation = expit(
        model.citation_location + model.spread * citation_latent[:, None] + bias + citation_noise
    )
    g = model.detector_on_precision
    uncertainty = -g * latent + np.sqrt(1 - g**2) * rng.standard_normal(n)
    detector = _MAX_ENTROPY * expit(-0.5 + uncertainty)
    return SimulatedMeasures(
        true_precision=expit(true_logit),
        precision=np.round(precision, 3),
        citation=np.round(citation, 3),
        detector=np.round(detector, 4),
    )


def annotator_names(annotators: int) -> list[str]:
    return [f"annotator-{number}" for number in range(1, annotators + 1)]


def annotation_rows(
    transcript_ids: list[str],
    measures: SimulatedMeasures,
    *,
    cites: list[bool],
) -> list[tuple[str, str, str, float]]:
    """Long-format rows (transcript_id, annotator, measure, value) as the import reads them.

    Citation support is rated only where the transcript asks for sources; the
    detector is run once, and its score is in the first annotator's file.
    """
    names = annotator_names(measures.precision.shape[1])
    rows = []
    for index, transcript_id in enumerate(transcript_ids):
        for column, name in enumerate(names):
            rows.append((transcript_id, name, FACTUAL_PRECISION, measures.precision[index, column]))
            if cites[index]:
                rows.append(
                    (transcript_id, name, CITATION_SUPPORT, measures.citation[index, column])
                )
            if column == 0:
                rows.append((transcript_id, name, DETECTOR, measures.detector[index]))
    return [(t, a, m, float(v)) for t, a, m, v in rows]


def rows_csv(rows: list[tuple[str, str, str, float]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerows((t, a, m, repr(v)) for t, a, m, v in rows)
    return buffer.getvalue()
