"""The known parameters of the simulated validation study (docs/design/validation-analysis.md §14.9)
and the figures they imply, so that a test or a report can be checked against
the answer that was put in. Plain numpy and the standard library.

Latent variables, all standard normal, in the order of `LATENT_KEYS`: the five
SHS dimension factors (FA, SR, LC, DP, RG) and three companion factors
(usability, explanation quality, trust). Their correlations come from a
second-order model: a general level G of perceived reliability with

    F_d = gamma_d * G + sqrt(1 - gamma_d^2) * U_d          (U_d independent)
    C_c = rho_c * G + sqrt(1 - rho_c^2) * V_c   (V_c correlated kappa among them)

so corr(F_d, F_e) = gamma_d * gamma_e, corr(C_c, G) = rho_c (the convergent
validity put in) and corr(F_d, C_c) = gamma_d * rho_c.

Each latent variable of an evaluation is a sum of independent parts with the
same correlations: the participant's (share `participant_icc`), the system's
(share `system_share`) and the evaluation's own (the rest). The retest keeps
the participant and the system; its own part correlates `occasion_stability`
with the first evaluation's, and every item's error is drawn afresh.

An item's keyed continuous response is  y* = loading * factor + sqrt(1 -
loading^2) * error;  its code on the keyed side is 1 + the number of its
thresholds below y*. A reversed item (the SHS's negatively worded items, the
companion scales' reversed items) records the code mirrored on its scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scoring.instruments.companions import COMPANION_SCALES
from scoring.instruments.shs import DIMENSION_KEYS, ITEMS

COMPANION_FACTORS = ("usability", "explanation", "trust")
LATENT_KEYS = (*DIMENSION_KEYS, *COMPANION_FACTORS)
# Column of each SHS item's dimension factor among the latent variables.
ITEM_FACTOR = np.array([DIMENSION_KEYS.index(item.dimension) for item in ITEMS])
ITEM_REVERSED = np.array([item.polarity < 0 for item in ITEMS])


@dataclass(frozen=True)
class CompanionShape:
    """What the generator needs of a companion scale: its codes and which items
    are reversed (the registry's), and which latent factor drives its items
    at which standardised loading (the model's)."""

    factor: str
    codes: tuple[int, ...]
    reversed: tuple[bool, ...]
    loading: float

    @property
    def thresholds(self) -> np.ndarray:
        # Symmetric around the middle option: the companion scales' own means are
        # not what the simulation is about.
        return np.linspace(-1.6, 1.6, len(self.codes) - 1)


def _shape(key: str, factor: str, loading: float) -> CompanionShape:
    scale = COMPANION_SCALES[key]
    return CompanionShape(
        factor, scale.codes, tuple(item.reversed for item in scale.items), loading
    )


COMPANION_SHAPES = {
    "sus": _shape("sus", "usability", 0.70),
    "scs": _shape("scs", "explanation", 0.75),
    "trust": _shape("trust", "trust", 0.75),
}

_POSITIVE_THRESHOLDS = (-1.8, -1.0, -0.2, 0.9)  # keyed mean code about 3.6
_NEGATIVE_THRESHOLDS = (-1.6, -0.8, 0.0, 1.1)  # keyed mean code about 3.4


@dataclass(frozen=True)
class LatentParameters:
    # Loadings of the dimensions on the general level (second order).
    general_loadings: tuple[float, ...] = (0.90, 0.85, 0.85, 0.75, 0.70)
    # Correlation of the usability, explanation and trust factors with the general level.
    companion_general_r: tuple[float, ...] = (0.45, 0.65, 0.75)
    companion_unique_r: float = 0.30  # kappa: what the companion factors share beyond G
    # Standardised loadings of the SHS items on their dimension, in item order.
    item_loadings: tuple[float, ...] = (0.85, 0.75, 0.80, 0.70, 0.80, 0.70, 0.75, 0.65, 0.75, 0.65)
    # Four thresholds per SHS item on its keyed side, in item order.
    item_thresholds: tuple[tuple[float, ...], ...] = tuple(
        _NEGATIVE_THRESHOLDS if item.polarity < 0 else _POSITIVE_THRESHOLDS for item in ITEMS
    )
    # (language, item key, shift added to that item's thresholds): a non-invariant
    # scenario; empty, the default, is full invariance across languages.
    language_threshold_shifts: tuple[tuple[str, str, float], ...] = ()
    participant_icc: float = 0.30
    system_share: float = 0.05
    occasion_stability: float = 0.60
    companions: dict[str, CompanionShape] = field(default_factory=lambda: dict(COMPANION_SHAPES))

    def __post_init__(self) -> None:
        shares = self.participant_icc + self.system_share
        if not (0 <= self.participant_icc and 0 <= self.system_share and shares < 1):
            raise ValueError("participant_icc and system_share must be >= 0 and sum below 1")
        if not 0 <= self.occasion_stability <= 1:
            raise ValueError("occasion_stability must lie between 0 and 1")
        loadings = [*self.general_loadings, *self.companion_general_r, *self.item_loadings]
        if not all(0 < value < 1 for value in loadings):
            raise ValueError("loadings and correlations with the general level must lie in (0, 1)")


DEFAULT = LatentParameters()
# Answers to q8 come out lower in French and q4 higher in German than the
# latent levels say: what an invariance analysis should flag.
NON_INVARIANT = LatentParameters(language_threshold_shifts=(("fr", "q8", 0.6), ("de", "q4", -0.5)))


def latent_correlations(params: LatentParameters) -> np.ndarray:
    """The 8 x 8 correlations of the latent variables (LATENT_KEYS order)."""
    general = np.array([*params.general_loadings, *params.companion_general_r])
    unique = np.sqrt(1 - general**2)
    shared = np.full((3, 3), params.companion_unique_r)
    np.fill_diagonal(shared, 1.0)
    mixing = np.eye(len(LATENT_KEYS))
    mixing[5:, 5:] = shared
    return np.outer(general, general) + np.outer(unique, unique) * mixing


def factor_correlations(params: LatentParameters) -> np.ndarray:
    """The 5 x 5 correlations of the SHS dimension factors: what a CFA estimates."""
    return latent_correlations(params)[:5, :5]


def retest_latent_r(params: LatentParameters) -> float:
    """Correlation of a latent variable with itself at the retest."""
    shared = params.participant_icc + params.system_share
    return shared + (1 - shared) * params.occasion_stability


def _sum_score_parts(params: LatentParameters) -> tuple[float, float]:
    """(common, unique) variance of the sum of the keyed continuous SHS responses."""
    weights = np.zeros((len(ITEMS), len(LATENT_KEYS)))
    weights[np.arange(len(ITEMS)), ITEM_FACTOR] = params.item_loadings
    common = float(weights.sum(axis=0) @ latent_correlations(params) @ weights.sum(axis=0))
    return common, float(np.sum(1 - np.square(params.item_loadings)))


def continuous_total_retest_r(params: LatentParameters) -> float:
    """Test-retest correlation (= ICC, no occasion shift) of the keyed continuous sum."""
    common, unique = _sum_score_parts(params)
    return retest_latent_r(params) * common / (common + unique)


def continuous_total_participant_icc(params: LatentParameters) -> float:
    """Correlation of one participant's two evaluations (different systems) of the sum."""
    common, unique = _sum_score_parts(params)
    return params.participant_icc * common / (common + unique)


def continuous_total_companion_r(params: LatentParameters, scale: str) -> float:
    """Correlation of the keyed continuous SHS sum with the scale's keyed continuous sum."""
    shape = params.companions[scale]
    column = LATENT_KEYS.index(shape.factor)
    sigma = latent_correlations(params)
    shs_weights = np.zeros(len(LATENT_KEYS))
    np.add.at(shs_weights, ITEM_FACTOR, params.item_loadings)
    common, unique = _sum_score_parts(params)
    k = len(shape.reversed)
    scale_var = (k * shape.loading) ** 2 + k * (1 - shape.loading**2)
    covariance = float(shs_weights @ sigma[:, column]) * k * shape.loading
    return covariance / math.sqrt((common + unique) * scale_var)


def _normal_pdf(x: float) -> float:
    return math.exp(-x * x / 2) / math.sqrt(2 * math.pi)


def _normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def code_probabilities(thresholds) -> np.ndarray:
    """P(keyed code = 1, 2, ...) of a standard normal response cut at `thresholds`."""
    edges = [0.0, *(_normal_cdf(t) for t in thresholds), 1.0]
    return np.diff(edges)


def attenuated_loadings(params: LatentParameters) -> np.ndarray:
    """The standardised loadings a linear (ML) CFA of the codes should find.

    The polyserial relation: cutting a standard normal y* at thresholds t gives a
    code whose Pearson correlation with y* is sum(phi(t)) / sd(code), so a code
    correlates with its factor at loading times that factor (Olsson, Drasgow &
    Dorans 1982). Exact for a code with one continuous variable; for the CFA of
    codes it is the usual close approximation (within .01 of the exact ML value
    here, tests/validation/test_latent_cfa.py). At the base thresholds: a
    language's shift changes its codes' attenuation a little.
    """
    factors = []
    for thresholds in params.item_thresholds:
        probabilities = code_probabilities(thresholds)
        codes = np.arange(1, len(probabilities) + 1)
        mean = probabilities @ codes
        sd = math.sqrt(probabilities @ (codes - mean) ** 2)
        factors.append(sum(_normal_pdf(t) for t in thresholds) / sd)
    return np.array(params.item_loadings) * np.array(factors)
