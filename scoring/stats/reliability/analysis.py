"""Psychometric analysis of SHS evaluations (docs/design/analysis.md §8, paper section 7).

`analyze(answers)` takes the raw answers of n evaluations, an (n, 10) integer
array in item order q1..q10, and returns a JSON-ready dict with the keys of
docs/design/analysis.md §8, plus two keys of its own:

- `additions`: figures beyond the paper (McDonald's omega total and the
  Spearman-Brown reliability of each two-item dimension), marked as such;
- `warnings`: one entry `{"figure", "reason", "message", "params"}` for every
  figure that is null, and for caveats about figures that are reported
  (Shapiro-Wilk p above n = 5000, a Heywood case in the factor model, a
  Spearman-Brown value outside [-1, 1], a sample below the small-sample
  threshold). `reason` is English; `message` is the same sentence with
  `{placeholders}` for `params`, so that a report can translate it.

Besides the paper's figures: `paired_item_p` (the two-sided p of each paired-item r;
the paper reports "all p < .001") and `small_sample` (the threshold below
which alpha, correlations and normality tests carry a caution; the paper's
own recipe asks for at least 30 users).

A figure that cannot be computed (too few evaluations, an item or score
without variance) is null, never NaN, and never a crash.

Item-level statistics use the reverse-scored items: a negative item b enters
as -b (docs/design/analysis.md §8.1), so that every item points towards "more reliable". All sums of
squares come from integer cross-product matrices (one of the ten items, one of
the five dimension scores), which are exact: whether a variance is zero is
decided without rounding, and the whole analysis of 100,000 evaluations costs a
few matrix products.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.shs import (
    DIMENSION_KEYS,
    DIMENSIONS,
    ITEM_KEYS,
    ITEMS,
    MIN_ANSWER,
    SCALE_VALUES,
)
from scoring.scores.engine import NEGATIVE_COLUMNS, POSITIVE_COLUMNS, checked_answers
from scoring.stats import estimators
from scoring.stats.caveats import (
    NO_EVALUATIONS,
    PAIRED_R_NULL,
    REST_CONSTANT,
    SB_NOT_INTERPRETABLE,
    SMALL_SAMPLE_N,
    TOO_FEW,
    ZERO_VARIANCE,
    Warnings,
    gettext_noop,
    json_ready,
    small_sample_cautions,
)

# Correlations, alpha and the tests need at least this many evaluations.
MIN_EVALUATIONS = 3
CONFIDENCE = 0.95
# G2 divides by (n - 2)(n - 3).
_KURTOSIS_MIN = 4
# Royston's approximation behind scipy's Shapiro-Wilk p is validated up to here.
SHAPIRO_VALIDATED_N = 5000
# An answer of +1 or +2 is agreement (paper 7.3: "agreed or strongly agreed").
AGREEMENT_FROM = 1
ADDITIONS_NOTE = (
    "beyond the paper: McDonald's omega total from a one-factor model of the ten "
    "reverse-scored items, and the Spearman-Brown reliability of each two-item dimension"
)
DIMENSION_PAIRS: tuple[tuple[str, str], ...] = tuple(combinations(DIMENSION_KEYS, 2))

_POLARITY = np.array([item.polarity for item in ITEMS], dtype=np.int64)
# Figures by key; None where a figure cannot be computed (the warnings say why).
Figures = dict[str, float | None]


def _too_few(w: Warnings, figure: str, n: int, needed: int = MIN_EVALUATIONS) -> None:
    w.null(figure, TOO_FEW, needed=needed, n=n)


def _raw_answers(answers: NDArray[Any]) -> NDArray[np.int64]:
    # int64: parse_answers hands over int8, which the cross-products would overflow.
    return checked_answers(answers).astype(np.int64)


def centred_products(values: NDArray[Any]) -> NDArray[Any]:
    """n * X'X - m m' for integer X: n(n-1) times the sample covariance, exactly.

    Exact integer arithmetic (int64 holds it up to several 10^8 evaluations) is
    what lets `== 0` decide that a variance vanishes.
    """
    n = values.shape[0]
    sums = values.sum(axis=0)
    products: NDArray[Any] = n * (values.T @ values) - np.outer(sums, sums)
    return products


def _correlation(products: NDArray[Any], i: int, j: int) -> float | None:
    if products[i, i] == 0 or products[j, j] == 0:
        return None
    r = products[i, j] / math.sqrt(float(products[i, i]) * float(products[j, j]))
    return max(-1.0, min(1.0, float(r)))


def alpha_from_products(products: NDArray[Any]) -> float | None:
    """Cronbach's alpha from centred cross-products (any positive multiple of the
    covariance matrix); None when the total does not vary."""
    k = products.shape[0]
    total = products.sum()
    if total == 0:
        return None
    return float(k / (k - 1) * (1.0 - np.trace(products) / total))


def feldt_interval(alpha: float, n: int, k: int, confidence: float = CONFIDENCE) -> list[float]:
    """Feldt's (1965) interval: (1 - alpha) / (1 - alpha_hat) ~ F(n - 1, (n - 1)(k - 1))."""
    df1, df2 = n - 1, (n - 1) * (k - 1)
    tail = (1.0 - confidence) / 2
    upper_f = estimators.f_quantile(1.0 - tail, df1, df2)
    lower_f = estimators.f_quantile(tail, df1, df2)
    return [float(1.0 - (1.0 - alpha) * upper_f), float(1.0 - (1.0 - alpha) * lower_f)]


def _reliability(products: NDArray[np.int64] | None, n: int, w: Warnings) -> dict[str, Any]:
    k = len(ITEM_KEYS)
    figures: dict[str, Any] = {"cronbach_alpha": {"alpha": None, "ci95": None}}
    item_total: Figures = {}
    if_deleted: Figures = {}
    if products is None:
        _too_few(w, "cronbach_alpha", n)
        for part in ("item_total", "alpha_if_deleted"):
            for key in ITEM_KEYS:
                _too_few(w, f"{part}.{key}", n)
            figures[part] = dict.fromkeys(ITEM_KEYS)
        return figures
    alpha = alpha_from_products(products)
    if alpha is None:
        w.null("cronbach_alpha", gettext_noop("the total of the ten items has zero variance"))
    else:
        figures["cronbach_alpha"] = {"alpha": alpha, "ci95": feldt_interval(alpha, n, k)}
    row_sums = products.sum(axis=1)
    total = products.sum()
    for index, key in enumerate(ITEM_KEYS):
        own = products[index, index]
        rest = total - 2 * row_sums[index] + own
        item_total[key] = None
        if own == 0:
            w.null(f"item_total.{key}", ZERO_VARIANCE, items=key)
        elif rest == 0:
            w.null(f"item_total.{key}", REST_CONSTANT)
        else:
            covariance = row_sums[index] - own
            item_total[key] = float(covariance / math.sqrt(float(own) * float(rest)))
        others = [j for j in range(k) if j != index]
        alpha_without = alpha_from_products(products[np.ix_(others, others)])
        if alpha_without is None:
            w.null(f"alpha_if_deleted.{key}", REST_CONSTANT)
        if_deleted[key] = alpha_without
    figures["item_total"] = item_total
    figures["alpha_if_deleted"] = if_deleted
    return figures


def _dimension_correlations(differences: NDArray[np.int64], w: Warnings) -> dict[str, Figures]:
    n = differences.shape[0]
    products = centred_products(differences) if n >= MIN_EVALUATIONS else None
    correlations: dict[str, Figures] = {}
    for first, second in DIMENSION_PAIRS:
        label = f"{first}-{second}"
        figure = f"dimension_correlations.{label}"
        if products is None:
            _too_few(w, figure, n)
            correlations[label] = {"r": None, "p": None}
            continue
        r = _correlation(products, DIMENSION_KEYS.index(first), DIMENSION_KEYS.index(second))
        if r is None:
            constant = [
                key
                for key in (first, second)
                if products[DIMENSION_KEYS.index(key), DIMENSION_KEYS.index(key)] == 0
            ]
            w.null(
                figure,
                gettext_noop("zero variance in the dimension scores: {dimensions}"),
                dimensions=" and ".join(constant),
            )
            correlations[label] = {"r": None, "p": None}
        else:
            correlations[label] = {"r": r, "p": estimators.pearson_p(r, n)}
    return correlations


def _paired_items(
    products: NDArray[np.int64] | None, n: int, w: Warnings
) -> tuple[Figures, Figures]:
    """Pearson r of each positive item with its reversed negative item, and its two-sided p."""
    paired: Figures = {}
    p_values: Figures = {}
    for dimension, a, b in zip(DIMENSIONS, POSITIVE_COLUMNS, NEGATIVE_COLUMNS, strict=True):
        figure = f"paired_item_r.{dimension.key}"
        r = None
        if products is None:
            _too_few(w, figure, n)
        else:
            r = _correlation(products, a, b)
            if r is None:
                constant = [ITEM_KEYS[i] for i in (a, b) if products[i, i] == 0]
                w.null(figure, ZERO_VARIANCE, items=" and ".join(constant))
        paired[dimension.key] = r
        p_values[dimension.key] = None if r is None else estimators.pearson_p(r, n)
        if r is None:
            w.null(f"paired_item_p.{dimension.key}", PAIRED_R_NULL, dimension=dimension.key)
    return paired, p_values


def _response_chi2(raw: NDArray[np.int64], w: Warnings) -> dict[str, Any]:
    counts = np.bincount((raw - MIN_ANSWER).ravel(), minlength=len(SCALE_VALUES))
    figures: dict[str, Any] = {
        "chi2": None,
        "df": len(SCALE_VALUES) - 1,
        "p": None,
        "counts": {
            str(value): int(count) for value, count in zip(SCALE_VALUES, counts, strict=True)
        },
    }
    if raw.shape[0] == 0:
        w.null("response_chi2", gettext_noop("no answers"))
        return figures
    expected = counts.sum() / len(SCALE_VALUES)
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    figures["chi2"] = chi2
    figures["p"] = estimators.chi2_upper_tail(chi2, figures["df"])
    return figures


def _distribution(shs: NDArray[np.float64], constant: bool, w: Warnings) -> dict[str, Any]:
    n = shs.shape[0]
    figures: dict[str, Any] = {
        "shapiro": {"W": None, "p": None},
        "skewness": None,
        "kurtosis": None,
    }
    if n < MIN_EVALUATIONS:
        _too_few(w, "shapiro", n)
        _too_few(w, "skewness", n)
        _too_few(w, "kurtosis", n, _KURTOSIS_MIN)
        return figures
    if constant:
        for figure in ("shapiro", "skewness", "kurtosis"):
            w.null(figure, gettext_noop("overall SHS has zero variance"))
        return figures
    w_statistic, p = estimators.shapiro_wilk(shs)
    figures["shapiro"] = {"W": w_statistic, "p": p}
    if n > SHAPIRO_VALIDATED_N:
        w.note(
            "shapiro",
            gettext_noop("p is an approximation not validated for n > {limit}"),
            limit=SHAPIRO_VALIDATED_N,
        )
    figures["skewness"] = estimators.skewness(shs)
    if n < _KURTOSIS_MIN:
        _too_few(w, "kurtosis", n, _KURTOSIS_MIN)
    else:
        figures["kurtosis"] = estimators.excess_kurtosis(shs)
    return figures


def _mean_and_sd(values: NDArray[np.int64], scale: int, figure: str, w: Warnings) -> Figures:
    """Mean and sample SD of integer `values` divided by `scale`.

    The sums are taken over the integers, so that identical scores give an SD
    of exactly 0 rather than a rounding residue.
    """
    n = values.shape[0]
    if n == 0:
        w.null(figure, NO_EVALUATIONS)
        return {"mean": None, "sd": None}
    total = int(values.sum())
    mean = total / (n * scale)
    if n == 1:
        _too_few(w, f"{figure}.sd", n, 2)
        return {"mean": mean, "sd": None}
    spread = n * int((values * values).sum()) - total * total  # n(n-1) times the variance
    return {"mean": mean, "sd": math.sqrt(spread / (n * (n - 1))) / scale}


def item_answer_counts(answers: NDArray[Any]) -> NDArray[np.int64]:
    """(10, 5) counts of each answer -2..+2 per item, from raw answers in item order."""
    raw = _raw_answers(answers)
    counts = np.zeros((len(ITEM_KEYS), len(SCALE_VALUES)), dtype=np.int64)
    for index in range(len(ITEM_KEYS)):
        counts[index] = np.bincount(raw[:, index] - MIN_ANSWER, minlength=len(SCALE_VALUES))
    return counts


def _shares(mask: NDArray[np.bool_], keys: tuple[str, ...], figure: str, w: Warnings) -> Figures:
    if mask.shape[0] == 0:
        for key in keys:
            w.null(f"{figure}.{key}", NO_EVALUATIONS)
        return dict.fromkeys(keys)
    return {key: float(share) for key, share in zip(keys, mask.mean(axis=0), strict=True)}


def _omega(products: NDArray[np.int64] | None, n: int, w: Warnings) -> float | None:
    figure = "additions.omega_total"
    if products is None:
        _too_few(w, figure, n)
        return None
    if (np.diag(products) == 0).any():
        constant = [key for i, key in enumerate(ITEM_KEYS) if products[i, i] == 0]
        w.null(figure, ZERO_VARIANCE, items=", ".join(constant))
        return None
    scale = np.sqrt(np.diag(products).astype(float))
    omega, caveats = estimators.omega_total(products / np.outer(scale, scale))
    for caveat in caveats:
        w.note(figure, caveat)
    if not math.isfinite(omega):
        w.null(figure, gettext_noop("the one-factor fit gave no finite value"))
        return None
    return omega


def _spearman_brown(paired: Figures, w: Warnings) -> Figures:
    """2r / (1 + r) per dimension. Below r = -1/3 it falls below -1: no reliability
    can be that, so such a value is reported with a flag, not hidden."""
    values: Figures = {}
    for key, r in paired.items():
        figure = f"additions.spearman_brown.{key}"
        values[key] = None
        if r is None:
            w.null(figure, PAIRED_R_NULL, dimension=key)
        elif r <= -1.0:
            w.null(figure, gettext_noop("the pair correlates at r = -1"))
        else:
            value = values[key] = 2 * r / (1 + r)
            if not -1.0 <= value <= 1.0:
                w.note(figure, SB_NOT_INTERPRETABLE, value=round(value, 2))
    return values


def _additions(
    products: NDArray[np.int64] | None, paired: Figures, n: int, w: Warnings
) -> dict[str, Any]:
    return {
        "note": ADDITIONS_NOTE,
        "omega_total": _omega(products, n, w),
        "spearman_brown": _spearman_brown(paired, w),
    }


def analyze(answers: NDArray[Any], *, small_sample_n: int = SMALL_SAMPLE_N) -> dict[str, Any]:
    """The analysis of docs/design/analysis.md §8 over an (n, 10) array of raw answers (-2..+2)
    in item order.

    Below `small_sample_n` evaluations, alpha, the correlations and the normality
    test carry a caution in `warnings` and `small_sample`.
    """
    raw = _raw_answers(answers)
    n = raw.shape[0]
    w = Warnings()
    items = raw * _POLARITY
    products = centred_products(items) if n >= MIN_EVALUATIONS else None
    # Integer a - b and a + b per dimension: s_i and c_i times 4, and SHS
    # times 20 in `totals`, the exact grid the engine scores on.
    differences = raw[:, POSITIVE_COLUMNS] - raw[:, NEGATIVE_COLUMNS]
    agreement = raw[:, POSITIVE_COLUMNS] + raw[:, NEGATIVE_COLUMNS]
    totals = differences.sum(axis=1)
    shs_constant = n > 0 and bool((totals == totals[0]).all())

    result: dict[str, Any] = {"n": int(n)}
    result.update(_reliability(products, n, w))
    result["dimension_correlations"] = _dimension_correlations(differences, w)
    paired, paired_p = _paired_items(products, n, w)
    result["paired_item_r"] = paired
    result["paired_item_p"] = paired_p
    result["response_chi2"] = _response_chi2(raw, w)
    result.update(_distribution(totals / 20, shs_constant, w))
    result["dimension_profile"] = {
        key: _mean_and_sd(differences[:, index], 4, f"dimension_profile.{key}", w)
        for index, key in enumerate(DIMENSION_KEYS)
    }
    result["overall"] = _mean_and_sd(totals, 20, "overall", w)
    result["consistent_share"] = _shares(
        np.abs(agreement) <= 1, DIMENSION_KEYS, "consistent_share", w
    )
    result["item_agreement"] = _shares(raw >= AGREEMENT_FROM, ITEM_KEYS, "item_agreement", w)
    result["additions"] = _additions(products, paired, n, w)
    result["small_sample"] = small_sample_cautions(result, small_sample_n, w)
    result = json_ready(result, "", w)
    result["warnings"] = w.entries
    return result
