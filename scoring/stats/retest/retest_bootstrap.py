"""Participant-clustered intervals of the retest ICCs (docs/design/validation-analysis.md §14.4).

A participant can give more than one retest pair (one per system they rated),
and their pairs are alike: the F-based intervals of McGraw & Wong take the
pairs as independent and are too narrow then. Here the participants are
resampled with replacement, every pair of a drawn participant kept
(scoring.stats.cluster's draws: resample b takes row b of
`Generator(seed).integers(0, G, (B, G))` over the participants in sorted order),
and ICC(2,1) and ICC(3,1) are recomputed in every resample.

With two occasions both ICCs are functions of five sums over the pairs, of the
pair's sum s = first + second and difference d = second - first:
    MSR = var(s) / 2,  MSE = var(d) / 2,  MSC = n mean(d)^2 / 2
    ICC(3,1) = (MSR - MSE) / (MSR + MSE)
    ICC(2,1) = (MSR - MSE) / (MSR + MSE + 2 (MSC - MSE) / n)
so a resample is a vector of participant weights and its sums are weights @
per-participant sums (as in scoring/stats/nested/clustered.py). The scores enter
as integers (the SHS times 20, a dimension times 4: the sums of the answers),
which an ICC does not see, so the sums are exact and a zero variance is zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats.cluster import ParticipantBootstrap, clustered_record, percentile_interval
from scoring.stats.retest.bland_altman import MIN_PAIRS

BLOCK = 250
# The score as an integer sum of answers: the SHS is that sum / 20, a dimension / 4.
INTEGER_SCALE = {"shs": 20.0}
DIMENSION_SCALE = 4.0
FIGURES = ("icc2_1", "icc3_1")
METHOD = (
    "participant-cluster bootstrap (participants resampled with replacement, all "
    "their retest pairs kept), ICC(2,1) and ICC(3,1) recomputed in every resample, "
    "percentile interval"
)


def _moments(scores: dict[str, tuple[NDArray[Any], NDArray[Any]]]) -> NDArray[np.float64]:
    """Per pair and score: 1, s, s^2, d, d^2 of the integer-scaled scores, side by side."""
    columns = []
    for name, (first, second) in scores.items():
        scale = INTEGER_SCALE.get(name, DIMENSION_SCALE)
        x = np.rint(np.asarray(first, dtype=float) * scale)
        y = np.rint(np.asarray(second, dtype=float) * scale)
        s, d = x + y, y - x
        columns.append(np.column_stack([np.ones_like(s), s, s * s, d, d * d]))
    return np.hstack(columns)


def icc_of_sums(sums: NDArray[np.float64]) -> NDArray[np.float64]:
    """(c, 2) ICC(2,1), ICC(3,1) from (c, 5) summed moments; NaN with fewer than
    MIN_PAIRS pairs or when the participants do not differ (var(s) = 0)."""
    n, s1, s2, d1, d2 = sums.T
    # n (n - 1) var: exact on integers, so `> 0` is a true test of spread.
    spread_s, spread_d = n * s2 - s1 * s1, n * d2 - d1 * d1
    with np.errstate(divide="ignore", invalid="ignore"):
        msr = spread_s / (2.0 * n * (n - 1.0))
        mse = spread_d / (2.0 * n * (n - 1.0))
        msc = d1 * d1 / (2.0 * n)
        consistency = (msr - mse) / (msr + mse)
        agreement = (msr - mse) / (msr + mse + 2.0 * (msc - mse) / n)
    ok = (n >= MIN_PAIRS) & (spread_s > 0)
    return np.column_stack([np.where(ok, agreement, np.nan), np.where(ok, consistency, np.nan)])


def retest_replicates(
    scores: dict[str, tuple[NDArray[Any], NDArray[Any]]],
    participants: NDArray[Any],
    *,
    resamples: int,
    seed: int,
) -> tuple[dict[str, NDArray[np.float64]], int]:
    """Score -> (resamples, 2) replicates of ICC(2,1), ICC(3,1); and the participants."""
    boot = ParticipantBootstrap(participants, seed=seed, resamples=resamples)
    features = _moments(scores)
    per_participant = np.zeros((boot.n_participants, features.shape[1]))
    np.add.at(per_participant, boot.cluster_of_row, features)
    blocks = [
        boot.weights(start, start + BLOCK) @ per_participant for start in range(0, resamples, BLOCK)
    ]
    summed = np.vstack(blocks)
    replicates = {
        name: icc_of_sums(summed[:, 5 * index : 5 * index + 5]) for index, name in enumerate(scores)
    }
    return replicates, boot.n_participants


def clustered_iccs(
    figures: dict[str, Any],
    replicates: NDArray[np.float64],
    drawn: dict[str, Any],
    confidence: float,
) -> None:
    """Attach `ci95_clustered` to each estimable ICC of one score's figures."""
    for column, name in enumerate(FIGURES):
        if figures.get(name) is not None:
            bounds = percentile_interval(replicates[:, column], 1.0 - confidence)
            figures[name]["ci95_clustered"] = clustered_record(
                bounds, replicates[:, column], METHOD, drawn
            )
