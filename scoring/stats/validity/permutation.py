"""The null of H3 with Deceptiveness as predictor (docs/design/criterion-verdicts.md §13.7):
what the standardised slope of the residual on DP would be if factual
precision carried no information.

The statistic is the correlation of DP with the residual of the outcome (the
mean of the four other dimensions) on factual precision. Its null
distribution comes from permuting factual precision: across evaluations
(unclustered), or as whole participants' blocks among participants with as
many evaluations (clustered), so that a participant's evaluations keep their
shared factual precision pattern. Permuting keeps the values of factual
precision, hence its variance, so each permutation's statistic is a few dot
products (`residual_correlations`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

# Permutations held in memory at once: 256 x 10,000 evaluations is 20 MB.
_CHUNK = 256


def residual_correlations(
    outcome: NDArray[np.float64], precision: NDArray[np.float64], predictor: NDArray[np.float64]
) -> NDArray[np.float64]:
    """corr(residual of `outcome` on each row of `precision`, `predictor`).

    `precision` is (k, n): k versions of the precision column. With centred
    columns, b = cov(f, y) / var(f), the residual e = y - b f has
    cov(e, d) = cov(y, d) - b cov(f, d) and var(e) = var(y) - b cov(f, y).
    """
    y = outcome - outcome.mean()
    d = predictor - predictor.mean()
    f = precision - precision.mean(axis=1, keepdims=True)
    var_f = np.einsum("ij,ij->i", f, f)
    cov_fy, cov_fd = f @ y, f @ d
    slope = cov_fy / var_f
    cov_ed = float(y @ d) - slope * cov_fd
    var_e = float(y @ y) - slope * cov_fy
    with np.errstate(invalid="ignore", divide="ignore"):
        result: NDArray[np.float64] = cov_ed / np.sqrt(var_e * float(d @ d))
    return result


def evaluation_orders(n: int, resamples: int, seed: int) -> Iterator[NDArray[np.intp]]:
    """Chunks of (k, n) row orders, every evaluation's precision moved freely."""
    rng = np.random.default_rng(seed)
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        yield np.argsort(rng.random((size, n)), axis=1)


def participant_orders(
    participants: NDArray[Any], resamples: int, seed: int
) -> Iterator[NDArray[np.intp]]:
    """Chunks of (k, n) row orders in which each participant takes over the
    precision values of another participant with as many evaluations, in the
    order of that participant's rows."""
    keys, cluster = np.unique(np.asarray(participants, dtype=str), return_inverse=True)
    rows_of = [np.flatnonzero(cluster == g) for g in range(len(keys))]
    by_size: dict[int, list[int]] = {}
    for g, rows in enumerate(rows_of):
        by_size.setdefault(len(rows), []).append(g)
    blocks = [np.array([rows_of[g] for g in group]) for _, group in sorted(by_size.items())]
    rng = np.random.default_rng(seed)
    n = len(cluster)
    for start in range(0, resamples, _CHUNK):
        size = min(_CHUNK, resamples - start)
        order = np.empty((size, n), dtype=np.intp)
        for block in blocks:  # (participants of this size, rows each)
            moved = np.argsort(rng.random((size, len(block))), axis=1)
            order[:, block] = block[moved]
        yield order


def permutation_null(
    outcome: NDArray[np.float64],
    precision: NDArray[np.float64],
    predictor: NDArray[np.float64],
    orders: Iterator[NDArray[np.intp]],
) -> NDArray[np.float64]:
    """The statistic under every permutation of `orders`."""
    return np.concatenate(
        [residual_correlations(outcome, precision[order], predictor) for order in orders]
    )


def tails(observed: float, null: NDArray[np.float64]) -> tuple[float, float]:
    """(p upper, p lower): the share of permutations at least as large (small)
    as the observed statistic, the observed one counted among them (Phipson
    and Smyth 2010), so that p is never 0."""
    valid = null[np.isfinite(null)]
    upper = (1.0 + float(np.sum(valid >= observed))) / (1.0 + len(valid))
    lower = (1.0 + float(np.sum(valid <= observed))) / (1.0 + len(valid))
    return upper, lower
