"""Simulated SHS answers with the structure of the paper's validation study.

Five correlated dimension factors F ~ N(0, R). Item i of dimension d has the
continuous response  x_i = location_i + polarity_i * scale_d * z_i  with
z_i = loading_d * F_d + sqrt(1 - loading_d^2) * e_i,  rounded and clipped to
the five answers -2..+2. The polarity is the instrument's own (scoring/
instruments/shs.py): a negatively worded item is agreed with when the
perceived reliability is low, so after reverse-scoring both items of a
dimension load positively on its factor.

The parameters are solved (`calibrate`) so that the *rounded* answers show
the paper's figures: the dimension means and SDs of section 7.3, the
inter-dimension correlations of Table 6, the paired-item correlations of
section 7.2 and the agreement rates of Q2, Q4 and Q8 (section 7.3).

These targets cannot all hold together with the reported alpha of .87:
Table 6 and the paired correlations imply an alpha of about .91, and the
model keeps the correlations. With the calibrated parameters below,
Cronbach's alpha over the ten items is .905 (200,000 fresh draws; the
figures above then lie within .004 of their targets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scoring.instruments.shs import DIMENSION_KEYS, DIMENSIONS, ITEM_KEYS, ITEMS

# The paper's figures, in DIMENSION_KEYS order (FA, SR, LC, DP, RG).
DIMENSION_MEANS = (0.34, 0.18, 0.31, 0.09, 0.29)
DIMENSION_SDS = (0.41, 0.44, 0.39, 0.46, 0.42)
PAIRED_R = (0.79, 0.71, 0.74, 0.65, 0.68)
DIMENSION_R = (  # Table 6
    (1.00, 0.72, 0.68, 0.54, 0.45),
    (0.72, 1.00, 0.61, 0.49, 0.42),
    (0.68, 0.61, 1.00, 0.57, 0.51),
    (0.54, 0.49, 0.57, 1.00, 0.48),
    (0.45, 0.42, 0.51, 0.48, 1.00),
)
# Share of evaluations agreeing or strongly agreeing with these negative items.
NEGATIVE_ITEM_AGREEMENT = {"q2": 0.228, "q4": 0.343, "q8": 0.438}
# SHS completion time in minutes (section 7.4): mean 4.2, SD 1.8.
SHS_MINUTES = (4.2, 1.8)
OBTAINED_ALPHA = 0.905

_POLARITY = np.array([item.polarity for item in ITEMS], dtype=float)
# Dimension of each item, as a column index into the factor matrix.
_ITEM_DIMENSION = np.array([DIMENSION_KEYS.index(item.dimension) for item in ITEMS])
_POSITIVE = [ITEM_KEYS.index(d.positive_item) for d in DIMENSIONS]
_NEGATIVE = [ITEM_KEYS.index(d.negative_item) for d in DIMENSIONS]


@dataclass(frozen=True)
class LatentParameters:
    loadings: tuple[float, ...]  # per dimension
    scales: tuple[float, ...]  # per dimension, on the answer scale
    locations: tuple[float, ...]  # per item, on the item's own answer scale
    factor_r: tuple[tuple[float, ...], ...]  # correlations of the five factors

    def answers(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """`count` evaluations as a (count, 10) integer array in item order."""
        return _rounded(self, *_draws(rng, count))


def _draws(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    return rng.standard_normal((count, len(DIMENSION_KEYS))), rng.standard_normal(
        (count, len(ITEM_KEYS))
    )


def _rounded(
    parameters: LatentParameters, factors: np.ndarray, noise: np.ndarray, shift: float = 0.0
) -> np.ndarray:
    """Answers of independent standard-normal `factors` (made correlated here) and
    item `noise`; `shift` moves every evaluation's five factors (a system's
    effect, surveys/answer_effects.py)."""
    correlated = factors @ np.linalg.cholesky(np.array(parameters.factor_r)).T + shift
    loading = np.array(parameters.loadings)[_ITEM_DIMENSION]
    z = loading * correlated[:, _ITEM_DIMENSION] + np.sqrt(1 - loading**2) * noise
    scale = np.array(parameters.scales)[_ITEM_DIMENSION]
    continuous = np.array(parameters.locations) + _POLARITY * scale * z
    return np.clip(np.rint(continuous), -2, 2).astype(int)


# Solved by calibrate(draws=200_000, iterations=100, seed=0).
CALIBRATED = LatentParameters(
    loadings=(0.954, 0.891, 0.916, 0.85, 0.87),
    scales=(0.903, 0.966, 0.809, 1.047, 0.915),
    locations=(1.286, -0.173, 0.875, 0.112, 0.629, -0.629, 0.728, 0.337, 0.596, -0.596),
    factor_r=(
        (1.0, 0.837, 0.784, 0.647, 0.534),
        (0.837, 1.0, 0.724, 0.603, 0.513),
        (0.784, 0.724, 1.0, 0.695, 0.619),
        (0.647, 0.603, 0.695, 1.0, 0.602),
        (0.534, 0.513, 0.619, 0.602, 1.0),
    ),
)


def dimension_scores(answers: np.ndarray) -> np.ndarray:
    """s_i = (a - b) / 4 per dimension, as scoring.scores.engine computes it."""
    return (answers[:, _POSITIVE] - answers[:, _NEGATIVE]) / 4


def paired_r(answers: np.ndarray) -> np.ndarray:
    """Correlation of each dimension's positive item with its reverse-scored negative."""
    return np.array(
        [
            np.corrcoef(answers[:, a], -answers[:, b])[0, 1]
            for a, b in zip(_POSITIVE, _NEGATIVE, strict=True)
        ]
    )


def shs_minutes(rng: np.random.Generator) -> float:
    """An SHS completion time: log-normal with the paper's mean and SD (right-skewed,
    as completion times are, and never negative)."""
    mean, sd = SHS_MINUTES
    sigma2 = np.log(1 + (sd / mean) ** 2)
    return float(rng.lognormal(np.log(mean) - sigma2 / 2, np.sqrt(sigma2)))


def calibrate(*, draws: int = 200_000, iterations: int = 100, seed: int = 0) -> LatentParameters:
    """Solve the parameters from the paper's figures by fixed-point iteration on one
    fixed set of draws: each step moves every parameter by the gap between the
    rounded answers' statistic and its target (locations for means and agreement
    rates, scales for SDs, loadings for paired r, factor correlations for Table 6)."""
    rng = np.random.default_rng(seed)
    factors, noise = _draws(rng, draws)
    targets = {
        "means": np.array(DIMENSION_MEANS),
        "sds": np.array(DIMENSION_SDS),
        "paired": np.array(PAIRED_R),
        "table6": np.array(DIMENSION_R),
    }
    loadings, scales = np.sqrt(targets["paired"]), np.ones(len(DIMENSION_KEYS))
    locations = 2 * targets["means"][_ITEM_DIMENSION] * _POLARITY
    factor_r = targets["table6"].copy()
    agreement = {ITEM_KEYS.index(key): rate for key, rate in NEGATIVE_ITEM_AGREEMENT.items()}
    for _step in range(iterations):
        parameters = _parameters(loadings, scales, locations, factor_r)
        answers = _rounded(parameters, factors, noise)
        scores = dimension_scores(answers)
        gap = targets["means"] - scores.mean(axis=0)
        locations = locations + 2 * gap[_ITEM_DIMENSION] * _POLARITY
        for item, rate in agreement.items():
            # Both items of the dimension move together: the mean stays, the split changes.
            shift = 2 * (rate - (answers[:, item] >= 1).mean())
            locations[[_POSITIVE[_ITEM_DIMENSION[item]], item]] += shift
        scales = scales * targets["sds"] / scores.std(axis=0, ddof=1)
        loadings = np.sqrt(np.clip(loadings**2 * targets["paired"] / paired_r(answers), 0.05, 0.98))
        ratio = targets["table6"] / np.corrcoef(scores.T)
        factor_r = _nearest_correlation(factor_r * ratio)
    return _parameters(loadings, scales, locations, factor_r)


def _parameters(loadings, scales, locations, factor_r) -> LatentParameters:
    return LatentParameters(
        loadings=tuple(float(v) for v in loadings),
        scales=tuple(float(v) for v in scales),
        locations=tuple(float(v) for v in locations),
        factor_r=tuple(tuple(float(v) for v in row) for row in factor_r),
    )


def _nearest_correlation(matrix: np.ndarray) -> np.ndarray:
    """The matrix with negative eigenvalues lifted and a unit diagonal, so that it
    stays a valid correlation matrix (Cholesky needs it positive definite)."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2)
    lifted = vectors @ np.diag(np.maximum(values, 1e-3)) @ vectors.T
    diagonal = np.sqrt(np.diag(lifted))
    return lifted / np.outer(diagonal, diagonal)
