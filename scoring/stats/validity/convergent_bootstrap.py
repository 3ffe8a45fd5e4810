"""Participant-clustered intervals for convergent validity
(docs/design/validation-analysis.md §14.3).

Each participant gives two evaluations, so the Fisher interval of r (which
takes them as independent) is too narrow. For each companion scale the rows
that have its score are resampled by participant (scoring.stats.cluster's draws:
resample b takes row b of `Generator(seed).integers(0, G, (B, G))` over the
participants in sorted order), and in every resample are recomputed: r of
each SHS score with the companion score, the reliability of each SHS score
(alpha of the ten keyed items; Spearman-Brown of a dimension's two items),
the companion scale's alpha, and the disattenuated r as the ratio itself with
that resample's own reliabilities, so that its interval carries their sampling
error; where a reliability is not above 0 the ratio has no bound and is +/-inf.

`companion_bootstrap` draws them for one companion scale and `with_clustered`
attaches the intervals to a pair's figures (`ci95_clustered`); the corrected r's
interval counts its unbounded resamples and is clipped to [-1, 1]
(`corrected_interval`), and scoring/stats/validity/convergent.py bases the verdict on it.

Vectorised as in scoring/stats/nested/clustered.py: every figure is a function of the
count, sums and cross-products of the rows, so a resample is a vector of
participant weights and its figures come from weights @ per-participant
sums. The companion score is centred on its mean first, so a constant score
gives an exact zero variance.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.companions import COMPANION_SCALES
from scoring.instruments.shs import DIMENSION_KEYS
from scoring.instruments.shs import ITEMS as SHS_ITEMS
from scoring.scores.engine import NEGATIVE_COLUMNS, POSITIVE_COLUMNS
from scoring.stats.cluster import (
    ParticipantBootstrap,
    clustered_record,
    percentile_interval,
    unbounded_percentile_interval,
)
from scoring.stats.correlations import MIN_N
from scoring.stats.validation_data import ValidationData

BLOCK = 250
ITEMS = 10
# Rows: the SHS (all ten keyed items), then each dimension (its two keyed items).
SCORE_WEIGHTS = np.zeros((1 + len(DIMENSION_KEYS), ITEMS))
SCORE_WEIGHTS[0] = 1.0
for _row, (_a, _b) in enumerate(zip(POSITIVE_COLUMNS, NEGATIVE_COLUMNS, strict=True), start=1):
    SCORE_WEIGHTS[_row, [_a, _b]] = 1.0
_POLARITY = np.array([item.polarity for item in SHS_ITEMS], dtype=np.float64)
CLUSTERED_METHOD = (
    "participant-cluster bootstrap (participants resampled with replacement, all "
    "their evaluations kept), percentile interval; the disattenuated r is the ratio "
    "r / sqrt(rel_x rel_y) recomputed in every resample (reliabilities included), a "
    "resample with a reliability not above 0 counted as unbounded (+/-inf with r's "
    "sign), the bounds clipped to [-1, 1]"
)


def _cross(values: NDArray[np.float64]) -> NDArray[np.float64]:
    cross: NDArray[np.float64] = (values[:, :, None] * values[:, None, :]).reshape(len(values), -1)
    return cross


def _features(
    keyed: NDArray[np.float64], y: NDArray[np.float64], companion: NDArray[np.float64] | None
) -> NDArray[np.float64]:
    """Per row: 1, items, items x items, y, y^2, items * y, and over rows with every
    companion item answered: 1, companion items, their cross-products."""
    columns = [np.ones((len(keyed), 1)), keyed, _cross(keyed), y[:, None], y[:, None] ** 2]
    columns.append(keyed * y[:, None])
    if companion is not None:
        complete: NDArray[np.bool_] = np.all(np.isfinite(companion), axis=1)
        items = np.where(complete[:, None], companion, 0.0)
        columns += [complete[:, None].astype(float), items, _cross(items)]
    return np.hstack(columns)


def _alpha(count: NDArray[np.float64], centred: NDArray[np.float64]) -> NDArray[np.float64]:
    k = centred.shape[-1]
    total = centred.sum(axis=(1, 2))
    trace = np.trace(centred, axis1=1, axis2=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((count >= 2) & (total != 0), k / (k - 1) * (1.0 - trace / total), np.nan)


def _centred(
    count: NDArray[np.float64], sums: NDArray[np.float64], cross: NDArray[np.float64]
) -> NDArray[np.float64]:
    k = sums.shape[1]
    cross = cross.reshape(-1, k, k)
    centred: NDArray[np.float64] = (
        count[:, None, None] * cross - sums[:, :, None] * sums[:, None, :]
    )
    return centred


def figures_of(sums: NDArray[np.float64], companion_items: int) -> dict[str, NDArray[np.float64]]:
    """The figures of each row of summed features (c, m): r (c, 6), rel_score (c, 6),
    rel_companion (c,), disattenuated (c, 6); NaN where a figure is undefined, and a
    disattenuated r of +/-inf (r's sign) where a reliability is not above 0."""
    n, s = sums[:, 0], sums[:, 1 : 1 + ITEMS]
    at = 1 + ITEMS + ITEMS * ITEMS
    centred = _centred(n, s, sums[:, 1 + ITEMS : at])
    sy, syy, sxy = sums[:, at], sums[:, at + 1], sums[:, at + 2 : at + 2 + ITEMS]
    score_variance = np.einsum("si,cij,sj->cs", SCORE_WEIGHTS, centred, SCORE_WEIGHTS)
    y_variance = n * syy - sy * sy
    covariance = (n[:, None] * sxy - s * sy[:, None]) @ SCORE_WEIGHTS.T
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = (n[:, None] >= MIN_N) & (score_variance != 0) & (y_variance[:, None] != 0)
        r = np.where(ok, covariance / np.sqrt(score_variance * y_variance[:, None]), np.nan)
        reliability = np.empty_like(r)
        reliability[:, 0] = _alpha(n, centred)
        for column, (a, b) in enumerate(zip(POSITIVE_COLUMNS, NEGATIVE_COLUMNS, strict=True)):
            va, vb = centred[:, a, a], centred[:, b, b]
            pair_r = centred[:, a, b] / np.sqrt(va * vb)
            valid = (n >= 2) & (va != 0) & (vb != 0) & (pair_r > -1.0)
            reliability[:, column + 1] = np.where(valid, 2.0 * pair_r / (1.0 + pair_r), np.nan)
        companion = np.full(len(n), np.nan)
        if companion_items:
            start = at + 2 + ITEMS
            k = companion_items
            count = sums[:, start]
            inner = _centred(count, sums[:, start + 1 : start + 1 + k], sums[:, start + 1 + k :])
            companion = _alpha(count, inner)
        positive = (reliability > 0) & (companion[:, None] > 0)
        known = np.isfinite(reliability) & np.isfinite(companion[:, None])
        divisor = np.sqrt(np.where(positive, reliability * companion[:, None], 1.0))
        # A reliability at or below 0 leaves the correction without bound (as it
        # nears 0 from above, r / sqrt(rel) passes any ceiling): +/-inf with r's
        # sign, so that the resample widens the interval instead of dropping out.
        unbounded = np.where(known, np.sign(r) * np.inf, np.nan)
        corrected = np.where(positive, r / divisor, unbounded)
    return {
        "r": r,
        "rel_score": reliability,
        "rel_companion": companion,
        "disattenuated": corrected,
    }


def _sum_by(
    features: NDArray[np.float64], cluster: NDArray[np.intp], groups: int
) -> NDArray[np.float64]:
    """Column sums of `features` per cluster 0..groups-1 (every cluster has a row);
    by sorted blocks, many times faster than np.add.at on wide rows."""
    if len(cluster) == 0:
        return np.zeros((groups, features.shape[1]))
    order = np.argsort(cluster, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(cluster[order]) != 0])
    return np.add.reduceat(features[order], starts, axis=0)


def companion_replicates(
    keyed: NDArray[Any],
    y: NDArray[Any],
    companion: NDArray[np.float64] | None,
    participants: NDArray[Any],
    *,
    resamples: int,
    seed: int,
) -> tuple[dict[str, NDArray[np.float64]], int]:
    """Replicates (resamples rows) of `figures_of` for one companion scale over the
    rows given: `keyed` (n, 10) keyed SHS items, `y` (n,) the companion score,
    `companion` (n, k) its keyed items (NaN where not answered) or None; and the
    number of participants resampled."""
    y = np.asarray(y, dtype=float)
    y = y - y.mean() if len(y) else y
    features = _features(np.asarray(keyed, dtype=float), y, companion)
    k = 0 if companion is None else companion.shape[1]
    boot = ParticipantBootstrap(participants, seed=seed, resamples=resamples)
    groups = boot.n_participants
    per_participant = _sum_by(features, boot.cluster_of_row, groups)
    blocks = []
    for start in range(0, resamples, BLOCK):
        blocks.append(figures_of(boot.weights(start, start + BLOCK) @ per_participant, k))
    replicates = {name: np.concatenate([b[name] for b in blocks]) for name in blocks[0]}
    return replicates, groups


def clustered_interval(
    replicates: NDArray[np.float64], confidence: float, boot: dict[str, Any]
) -> dict[str, Any]:
    """The percentile interval of one figure's replicates, with how it was drawn."""
    bounds = percentile_interval(replicates, 1.0 - confidence)
    return clustered_record(bounds, replicates, CLUSTERED_METHOD, boot)


def corrected_interval(
    replicates: NDArray[np.float64], confidence: float, boot: dict[str, Any]
) -> dict[str, Any]:
    """The clustered interval of the corrected r: its unbounded resamples (a
    reliability not above 0) count at their end of the order, and the bounds are
    clipped to [-1, 1], as far as a correlation goes."""
    bounds = unbounded_percentile_interval(replicates, 1.0 - confidence)
    if bounds is not None:
        bounds = (max(-1.0, min(1.0, bounds[0])), max(-1.0, min(1.0, bounds[1])))
    record = clustered_record(bounds, replicates, CLUSTERED_METHOD, boot)
    record["valid_replicates"] = int((~np.isnan(replicates)).sum())
    record["unbounded_replicates"] = int(np.isinf(replicates).sum())
    return record


def companion_bootstrap(
    data: ValidationData, companion: str, *, resamples: int, seed: int
) -> tuple[dict[str, NDArray[np.float64]], dict[str, int]]:
    """The cluster-bootstrap replicates of every figure of one companion scale."""
    scores = np.asarray(data.companion_scores[companion], dtype=np.float64)
    rows = np.isfinite(scores)
    keyed = np.asarray(data.answers, dtype=np.float64)[rows] * _POLARITY
    items, scale = data.companion_items.get(companion), COMPANION_SCALES.get(companion)
    keyed_items = None
    if items is not None and scale is not None and len(items):
        keyed_items = scale.keyed(np.asarray(items, dtype=np.float64)[rows])
    participants = np.asarray(data.participant, dtype=str)[rows]
    replicates, clusters = companion_replicates(
        keyed, scores[rows], keyed_items, participants, resamples=resamples, seed=seed
    )
    return replicates, {"seed": seed, "resamples": resamples, "clusters": clusters}


def with_clustered(
    figures: dict[str, Any],
    replicates: dict[str, NDArray[np.float64]],
    column: int,
    boot: dict[str, Any],
    confidence: float,
) -> None:
    """Attach the clustered intervals of r, both reliabilities and the corrected r."""
    if figures["r"] is not None:
        figures["ci95_clustered"] = clustered_interval(replicates["r"][:, column], confidence, boot)
    else:
        figures["ci95_clustered"] = None
    for key, values in (
        ("reliability_score", replicates["rel_score"][:, column]),
        ("reliability_companion", replicates["rel_companion"]),
    ):
        if figures[key]["value"] is not None:
            figures[key]["ci95_clustered"] = clustered_interval(values, confidence, boot)
    if figures["disattenuated"] is not None:
        figures["disattenuated"]["ci95_clustered"] = corrected_interval(
            replicates["disattenuated"][:, column], confidence, boot
        )
