"""Statistics that respect a participant's two evaluations
(docs/design/validation-analysis.md §14.7, paper 8.3).

Every other analysis of the platform treats the evaluations as independent,
yet each participant rates two systems. `nested_report` gives, beside the
usual (naive) interval of alpha and of the dimension correlations, an
interval from the participant-cluster bootstrap of scoring.stats.cluster (the same
draws: resample b takes row b of `Generator(seed).integers(0, G, (B, G))`
over the participants in sorted order); alpha within each system and each
language; the share of SHS variance due to the participant (scoring.stats.nested.icc);
and a per-language reliability table.

Vectorised: every figure is a function of the count, the sums and the
cross-products of the ten keyed items, so a resample is a vector of
participant weights (how often each was drawn) and its figures come from
weights @ per-participant sums, a few matrix products for hundreds of
resamples at once. The items are small integers and the weights counts, so
these sums are exact in float64 and `== 0` decides a zero variance without
rounding, as in scoring/stats/reliability/analysis.py.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.shs import DIMENSION_KEYS, ITEMS
from scoring.scores.engine import NEGATIVE_COLUMNS, POSITIVE_COLUMNS, checked_answers
from scoring.stats.caveats import SMALL_SAMPLE_N, TOO_FEW, gettext_noop, sentence
from scoring.stats.cluster import ParticipantBootstrap, n_valid, percentile_interval
from scoring.stats.correlations import fisher_interval
from scoring.stats.nested.groups import ALPHA_CONSTANT, group_alphas, group_labels, language_table
from scoring.stats.nested.icc import participant_share
from scoring.stats.reliability.analysis import DIMENSION_PAIRS, MIN_EVALUATIONS, feldt_interval
from scoring.stats.validation_data import ValidationData

CONFIDENCE = 0.95
# Resamples per block of matrix products; progress is reported after each block.
BLOCK = 250
# Alpha of a group smaller than this is not reported (paper 9.2: at least 30 users).
MIN_GROUP_N = SMALL_SAMPLE_N
ITEM_COUNT = len(ITEMS)
# What was computed, for the report's reader; English in the JSON, translated when shown.
BOOTSTRAP_METHOD = gettext_noop(
    "Participant-cluster bootstrap (participants resampled with replacement, all their "
    "evaluations kept), percentile interval."
)
ALPHA_METHOD = gettext_noop("Cronbach's alpha of the ten keyed items.")
R_METHOD = gettext_noop("Pearson's r.")
FELDT_METHOD = gettext_noop("Feldt (1965) interval, the evaluations taken as independent.")
FISHER_METHOD = gettext_noop("Fisher-z interval, the evaluations taken as independent.")

# A list of scores after the colon: "FA, SR" reads right in every language,
# where "{scores} has" would not agree with two of them.
SCORE_CONSTANT = gettext_noop("zero variance: {scores}")
FEW_VALID = gettext_noop("fewer than half of the resamples ({resamples}) gave a value")
NO_INTERVAL = gettext_noop("no interval for |r| = 1 or fewer than 4 evaluations")

_POLARITY = np.array([item.polarity for item in ITEMS], dtype=np.int64)
# Keyed items -> the five dimension totals a - b (4 s_i) and the SHS total (20 SHS):
# the keyed negative item is -b, so a dimension is the sum of its two keyed items.
_SCORE_WEIGHTS = np.zeros((len(DIMENSION_KEYS) + 1, ITEM_COUNT))
for _row, (_a, _b) in enumerate(zip(POSITIVE_COLUMNS, NEGATIVE_COLUMNS, strict=True)):
    _SCORE_WEIGHTS[_row, [_a, _b]] = 1.0
_SCORE_WEIGHTS[-1] = 1.0
SCORE_KEYS: tuple[str, ...] = (*DIMENSION_KEYS, "SHS")
_SHS = len(DIMENSION_KEYS)
PAIR_LABELS = tuple(f"{a}-{b}" for a, b in DIMENSION_PAIRS)
# Columns of the figure matrix: alpha, the ten dimension pairs, SHS with each dimension.
_CORRELATED = (
    *((DIMENSION_KEYS.index(a), DIMENSION_KEYS.index(b)) for a, b in DIMENSION_PAIRS),
    *((_SHS, index) for index in range(len(DIMENSION_KEYS))),
)


@dataclass(frozen=True)
class Moments:
    """Count, sums and cross-products of the keyed items, one row per unit."""

    count: NDArray[np.float64]  # (m,)
    sums: NDArray[np.float64]  # (m, 10)
    cross: NDArray[np.float64]  # (m, 100), X'X flattened

    def weighted(
        self, weights: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """For each row of `weights` (c, m): its count and n * X'X - s s' (c, 10, 10),
        n(n - 1) times the covariance of the units taken as often as weighted."""
        count = weights @ self.count
        sums = weights @ self.sums
        cross = (weights @ self.cross).reshape(-1, ITEM_COUNT, ITEM_COUNT)
        return count, count[:, None, None] * cross - sums[:, :, None] * sums[:, None, :]


def moments(keyed: NDArray[np.int64], unit: NDArray[np.integer[Any]], units: int) -> Moments:
    """The Moments of the rows of `keyed` grouped by `unit` codes 0..units-1."""
    keyed = keyed.astype(float)
    count = np.bincount(unit, minlength=units).astype(float)
    sums = np.zeros((units, ITEM_COUNT))
    np.add.at(sums, unit, keyed)
    cross = np.zeros((units, ITEM_COUNT * ITEM_COUNT))
    np.add.at(
        cross,
        unit,
        (keyed[:, :, None] * keyed[:, None, :]).reshape(len(keyed), ITEM_COUNT * ITEM_COUNT),
    )
    return Moments(count, sums, cross)


def figure_matrix(count: NDArray[np.float64], centred: NDArray[np.float64]) -> NDArray[np.float64]:
    """(c, 16): alpha, the ten inter-dimension r, the five SHS-by-dimension r; NaN where
    a variance is zero or there are too few evaluations."""
    k = ITEM_COUNT
    total = centred.sum(axis=(1, 2))
    trace = np.trace(centred, axis1=1, axis2=2)
    enough = count >= MIN_EVALUATIONS
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.where(enough & (total != 0), k / (k - 1) * (1.0 - trace / total), np.nan)
        scores = np.einsum("ij,cjk,lk->cil", _SCORE_WEIGHTS, centred, _SCORE_WEIGHTS)
        variance = np.diagonal(scores, axis1=1, axis2=2)
        columns = [alpha]
        for i, j in _CORRELATED:
            ok = enough & (variance[:, i] != 0) & (variance[:, j] != 0)
            r = scores[:, i, j] / np.sqrt(variance[:, i] * variance[:, j])
            columns.append(np.where(ok, np.clip(r, -1.0, 1.0), np.nan))
    return np.column_stack(columns)


def keyed_items(answers: NDArray[Any]) -> NDArray[np.int64]:
    """The ten items with the negative ones reversed (-b), as
    scoring/stats/reliability/analysis.py keys them."""
    return checked_answers(answers).astype(np.int64) * _POLARITY


def clustered_replicates(
    keyed: NDArray[np.int64],
    participants: NDArray[Any],
    *,
    resamples: int,
    seed: int,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[NDArray[np.float64], int]:
    """(resamples, 16) figure replicates of the cluster bootstrap, and the cluster count."""
    boot = ParticipantBootstrap(participants, seed=seed, resamples=resamples)
    clusters = boot.n_participants
    per_participant = moments(keyed, boot.cluster_of_row, clusters)
    blocks = []
    for start in range(0, resamples, BLOCK):
        weights = boot.weights(start, start + BLOCK)
        blocks.append(figure_matrix(*per_participant.weighted(weights)))
        if progress is not None:
            progress(min(start + BLOCK, resamples), resamples)
    return np.vstack(blocks), clusters


def _interval(bounds: tuple[float, float] | None) -> list[float] | None:
    return None if bounds is None else [float(bounds[0]), float(bounds[1])]


def _figure(
    estimate: float,
    n: int,
    method: str,
    naive: dict[str, Any] | None,
    replicates: NDArray[np.float64],
    why: dict[str, Any],
) -> dict[str, Any]:
    """One figure with its naive and its participant-clustered interval (or why not);
    `why` is a scoring.stats.caveats.sentence: its text is the "reason", its template and
    parameters stand beside it for a report to translate."""
    if not np.isfinite(estimate):
        return {
            "estimate": None,
            "n": n,
            "method": method,
            "reason": why["text"],
            "message": why["message"],
            "params": why["params"],
            "ci95_naive": None,
            "ci95_clustered": None,
        }
    clustered = _interval(percentile_interval(replicates, 1.0 - CONFIDENCE))
    few = None if clustered else sentence(FEW_VALID, resamples=len(replicates))
    return {
        "estimate": float(estimate),
        "n": n,
        "method": method,
        "reason": None,
        "ci95_naive": naive,
        "ci95_clustered": {
            "interval": clustered,
            "method": BOOTSTRAP_METHOD,
            "valid_replicates": n_valid(replicates),
            "reason": None if few is None else few["text"],
            "message": None if few is None else few["message"],
            "params": None if few is None else few["params"],
        },
    }


def _fisher(r: float, n: int) -> dict[str, Any]:
    interval = _interval(fisher_interval(r, n, 1.0 - CONFIDENCE)) if np.isfinite(r) else None
    return {
        "interval": interval,
        "method": FISHER_METHOD,
        "reason": None if interval else NO_INTERVAL,
    }


def _why_null(n: int, centred: NDArray[np.float64], scores: tuple[int, ...]) -> dict[str, Any]:
    if n < MIN_EVALUATIONS:
        return sentence(TOO_FEW, needed=MIN_EVALUATIONS, n=n)
    if not scores:
        return sentence(ALPHA_CONSTANT)
    variance = np.diagonal(_SCORE_WEIGHTS @ centred @ _SCORE_WEIGHTS.T)
    constant = [SCORE_KEYS[i] for i in scores if variance[i] == 0]
    return sentence(SCORE_CONSTANT, scores=", ".join(constant))


def clustered_figures(keyed: NDArray[np.int64], replicates: NDArray[np.float64]) -> dict[str, Any]:
    """Alpha and the correlations of the whole sample with both intervals."""
    n = len(keyed)
    count, centred = moments(keyed, np.zeros(n, dtype=np.int64), 1).weighted(np.ones((1, 1)))
    estimates = figure_matrix(count, centred)[0]
    alpha = estimates[0]
    naive_alpha = None
    if np.isfinite(alpha):
        naive_alpha = {
            "interval": feldt_interval(float(alpha), n, ITEM_COUNT, CONFIDENCE),
            "method": FELDT_METHOD,
            "reason": None,
        }
    figures = {
        "alpha": _figure(
            alpha, n, ALPHA_METHOD, naive_alpha, replicates[:, 0], _why_null(n, centred[0], ())
        )
    }
    labels = (*PAIR_LABELS, *(f"SHS-{key}" for key in DIMENSION_KEYS))
    correlations = {}
    for column, (label, pair) in enumerate(zip(labels, _CORRELATED, strict=True), start=1):
        r = estimates[column]
        why = _why_null(n, centred[0], pair)
        correlations[label] = _figure(r, n, R_METHOD, _fisher(r, n), replicates[:, column], why)
    figures["dimension_correlations"] = {label: correlations[label] for label in PAIR_LABELS}
    figures["shs_dimension_correlations"] = {
        key: correlations[f"SHS-{key}"] for key in DIMENSION_KEYS
    }
    return figures


def _groups(keyed: NDArray[np.int64], data: ValidationData, min_n: int) -> dict[str, Any]:
    """Alpha within each system and each language, and the per-language table."""
    figures, participants = {}, np.asarray(data.participant, dtype=str)
    for name in ("system", "language"):
        keys, codes = group_labels(getattr(data, name))
        group = moments(keyed, codes, len(keys))
        count, centred = group.weighted(np.eye(len(keys)))
        figures[f"alpha_by_{name}"] = group_alphas(
            count, centred, keys, min_n=min_n, confidence=CONFIDENCE
        )
    people = np.array([len(set(participants[codes == index])) for index in range(len(keys))])
    figures["language_table"] = language_table(
        count, group.sums, centred, people, keys, min_n=min_n, confidence=CONFIDENCE
    )
    return figures


def nested_report(
    data: ValidationData,
    *,
    resamples: int = 2000,
    seed: int = 20260801,
    progress: Callable[[int, int], None] | None = None,
    min_group_n: int = MIN_GROUP_N,
) -> dict[str, Any]:
    """The nested-data figures of docs/design/validation-analysis.md §14.7 for one study's
    evaluations.

    `progress(done, total)` is called after every block of BLOCK resamples;
    groups (systems, languages) below `min_group_n` evaluations are named, not estimated.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    keyed = keyed_items(data.answers)
    participants = np.asarray(data.participant, dtype=str)
    started = time.perf_counter()
    replicates, clusters = clustered_replicates(
        keyed, participants, resamples=resamples, seed=seed, progress=progress
    )
    report: dict[str, Any] = {
        "n": len(keyed),
        "participants": clusters,
        "bootstrap": {
            "method": BOOTSTRAP_METHOD,
            "seed": seed,
            "resamples": resamples,
            "clusters": clusters,
            "confidence": CONFIDENCE,
            "seconds": time.perf_counter() - started,
        },
    }
    report.update(clustered_figures(keyed, replicates))
    report.update(_groups(keyed, data, min_group_n))
    report["participant_share"] = participant_share(
        keyed.sum(axis=1) / 20.0, participants, data.system, confidence=CONFIDENCE
    )
    return report
