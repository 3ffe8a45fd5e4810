"""How far the annotators of the criterion-validity study agree (docs/design/criterion.md §13.3).

- `icc_2_1`: Shrout and Fleiss' (1979) ICC(2,1), two-way random effects,
  absolute agreement, single rater (McGraw and Wong's ICC(A,1)), from the
  two-way ANOVA of a complete targets x raters table, with McGraw and Wong's
  (1996) confidence interval;
- `krippendorff_interval`: Krippendorff's alpha for interval data, which
  allows missing ratings (the `krippendorff` library);
- `measure_agreement`: both for one measure, from transcript -> annotator -> value.

Figures that cannot be computed are None with a `reason`, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from itertools import combinations
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scoring.stats.caveats import gettext_noop, reason
from scoring.stats.estimators import f_quantile

CONFIDENCE = 0.95
# Below this many targets McGraw and Wong's interval is an artefact of its own
# approximation (for two transcripts it can reach -45): no interval is shown.
MIN_INTERVAL_TARGETS = 5
FEW_TARGETS = gettext_noop(
    "no interval: it needs at least {needed} transcripts rated by every annotator "
    "of the panel, and {n} were"
)
CLIPPED = gettext_noop(
    "the lower bound is cut at {floor}, the least ICC(2,1) can be with {k} annotators; "
    "the interval's own bound lay below it, a sign of how few transcripts it rests on"
)
BELOW_FLOOR = gettext_noop(
    "no interval: it lies below {floor}, the least ICC(2,1) can be with {k} annotators; "
    "the annotators disagree systematically"
)
# Every set of annotators is tried for the ICC panel up to this many; beyond
# it the panel is chosen among the ones with the most ratings (2^12 sets).
PANEL_SEARCH_LIMIT = 12


def _empty_icc(n: int, k: int, reason: str) -> dict[str, Any]:
    figures = ("value", "ci_low", "ci_high", "F", "df1", "df2", "p")
    return {
        **dict.fromkeys(figures),
        "ci_note": None,
        "n_targets": n,
        "n_raters": k,
        "reason": reason,
    }


def anova_table(table: NDArray[Any]) -> dict[str, Any]:
    """The two-way ANOVA without replication of an (n targets, k raters) table.

    Sums of squares, df and mean squares of the rows (targets), the columns
    (raters or occasions), the residual ("error": the interaction, which a
    single rating per cell cannot separate from error) and within targets
    (columns and error together, the one-way model's), with n and k.
    """
    table = np.asarray(table, dtype=np.float64)
    n, k = table.shape
    grand = table.mean()
    rows = k * float(((table.mean(axis=1) - grand) ** 2).sum())
    columns = n * float(((table.mean(axis=0) - grand) ** 2).sum())
    residual = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0, keepdims=True) + grand
    error = float((residual**2).sum())
    # A residual that is rounding left over from sums that cancel is zero.
    if error <= 1e-24 * (rows + columns):
        error = 0.0
    figures: dict[str, Any] = {
        "rows": {"ss": rows, "df": n - 1},
        "columns": {"ss": columns, "df": k - 1},
        "error": {"ss": error, "df": (n - 1) * (k - 1)},
        "within": {"ss": columns + error, "df": n * (k - 1)},
    }
    for source in figures.values():
        source["ms"] = source["ss"] / source["df"]
    figures["n"], figures["k"] = n, k
    return figures


def icc_2_1(ratings: ArrayLike) -> dict[str, Any]:
    """ICC(2,1) of an (n_targets, k_raters) table without missing cells.

    ICC = (MSR - MSE) / (MSR + (k - 1) MSE + k (MSC - MSE) / n); F = MSR / MSE
    with n - 1 and (n - 1)(k - 1) df tests ICC = 0. The 95% interval is McGraw
    and Wong's (1996, Table 7, case 2A), with Satterthwaite's df for the
    denominator.
    """
    table = np.asarray(ratings, dtype=float)
    if table.ndim != 2:
        raise ValueError("ratings must be a 2-dimensional (targets x raters) array")
    n, k = table.shape
    if n < 2 or k < 2:
        return _empty_icc(n, k, "needs at least 2 targets and 2 raters")
    if not np.isfinite(table).all():
        return _empty_icc(n, k, "every target needs a rating from every rater")
    anova = anova_table(table)
    msr, msc, mse = (anova[source]["ms"] for source in ("rows", "columns", "error"))
    denominator = msr + (k - 1) * mse + k * (msc - mse) / n
    if denominator <= 0.0:
        return _empty_icc(n, k, "the ratings do not vary")
    value = (msr - mse) / denominator
    df1, df2 = n - 1, (n - 1) * (k - 1)
    if mse <= 0.0:
        # No residual variance: agreement is exact up to rater offsets, and F is infinite.
        reason = "no residual variance: F, p and the interval are undefined"
        return {**_empty_icc(n, k, reason), "value": value, "df1": df1, "df2": df2}
    statistic = msr / mse
    from scipy.stats import f as f_distribution

    low, high, note = _bounded_interval(value, msr, msc, mse, n, k)
    return {
        "value": value,
        "ci_low": low,
        "ci_high": high,
        "ci_note": note,
        "F": statistic,
        "df1": df1,
        "df2": df2,
        "p": float(f_distribution.sf(statistic, df1, df2)),
        "n_targets": n,
        "n_raters": k,
        "reason": None,
    }


def _bounded_interval(
    value: float, msr: float, msc: float, mse: float, n: int, k: int
) -> tuple[float | None, float | None, dict[str, Any] | None]:
    """McGraw and Wong's interval, withheld below MIN_INTERVAL_TARGETS and cut
    at -1 / (k - 1): with k raters the ICC cannot be lower (for two, -1)."""
    if n < MIN_INTERVAL_TARGETS:
        return None, None, reason(FEW_TARGETS, needed=MIN_INTERVAL_TARGETS, n=n)
    low, high = mcgraw_wong_interval(value, msr, msc, mse, n, k)
    floor = -1.0 / (k - 1)
    if high is not None and high <= floor:
        return None, None, reason(BELOW_FLOOR, floor=floor, k=k)
    if low is not None and low < floor:
        return floor, high, reason(CLIPPED, floor=floor, k=k)
    return low, high, None


def mcgraw_wong_interval(
    icc: float,
    msr: float,
    msc: float,
    mse: float,
    n: int,
    k: int,
    confidence: float = CONFIDENCE,
) -> tuple[float | None, float | None]:
    """The interval of ICC(2,1) of McGraw & Wong (1996, Table 7, case 2A):
        a = k rho / (n (1 - rho)),  b = 1 + k rho (n - 1) / (n (1 - rho))
        v = (a MSC + b MSE)^2 / ((a MSC)^2 / (k - 1) + (b MSE)^2 / ((n - 1)(k - 1)))
        lower = n (MSR - F1 MSE) / (F1 (k MSC + (kn - k - n) MSE) + n MSR),  F1 = F(n - 1, v)
        upper = n (F2 MSR - MSE) / (k MSC + (kn - k - n) MSE + n F2 MSR),    F2 = F(v, n - 1)
    at the upper 1 - (1 - confidence) / 2 quantiles; v is Satterthwaite's df.
    """
    if icc >= 1.0:
        return None, None
    a = k * icc / (n * (1.0 - icc))
    b = 1.0 + k * icc * (n - 1) / (n * (1.0 - icc))
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
    tail = 1.0 - (1.0 - confidence) / 2.0
    f_upper, f_lower = f_quantile(tail, n - 1, v), f_quantile(tail, v, n - 1)
    spread = k * msc + (k * n - k - n) * mse
    low = n * (msr - f_upper * mse) / (f_upper * spread + n * msr)
    high = n * (f_lower * msr - mse) / (spread + n * f_lower * msr)
    return (low if math.isfinite(low) else None), (high if math.isfinite(high) else None)


def krippendorff_interval(ratings: ArrayLike) -> float | None:
    """Krippendorff's alpha (interval metric) of a raters x units array, NaN = missing.

    None when fewer than two units carry two ratings or the pairable values do
    not vary (alpha is 0 / 0 then).
    """
    import krippendorff

    data = np.asarray(ratings, dtype=float)
    if data.ndim != 2:
        raise ValueError("ratings must be a 2-dimensional (raters x units) array")
    pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
    if pairable.shape[1] < 2 or np.nanmax(pairable) == np.nanmin(pairable):
        return None
    value = float(krippendorff.alpha(reliability_data=pairable, level_of_measurement="interval"))
    return value if math.isfinite(value) else None


def icc_panel(values: Mapping[str, Mapping[str, float]]) -> tuple[list[str], list[str]]:
    """The annotators and transcripts of the ICC: the largest complete block.

    For every set of two or more annotators, the block is the transcripts all of
    them rated; the panel is the set whose block holds the most ratings
    (transcripts x annotators), ties going to more transcripts, then to the
    alphabetically first set. Above PANEL_SEARCH_LIMIT annotators only the ones
    with the most ratings are tried.
    """
    rated: dict[str, set[str]] = {}
    for transcript, by_annotator in values.items():
        for annotator in by_annotator:
            rated.setdefault(annotator, set()).add(transcript)
    annotators = sorted(rated, key=lambda a: (-len(rated[a]), a))[:PANEL_SEARCH_LIMIT]
    best: tuple[int, int, tuple[str, ...]] = (0, 0, ())
    for size in range(2, len(annotators) + 1):
        for panel in combinations(sorted(annotators), size):
            shared = set.intersection(*(rated[a] for a in panel))
            candidate = (len(shared) * size, len(shared), panel)
            if candidate[:2] > best[:2]:
                best = candidate
    chosen = list(best[2])
    transcripts = sorted(set.intersection(*(rated[a] for a in chosen))) if chosen else []
    return chosen, transcripts


def _finite(values: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Drops missing ratings (None or NaN) and transcripts left without any."""
    kept = {}
    for transcript, by_annotator in values.items():
        ratings = {
            str(a): float(v) for a, v in by_annotator.items() if v is not None and math.isfinite(v)
        }
        if ratings:
            kept[str(transcript)] = ratings
    return kept


def measure_agreement(values: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """ICC(2,1) on the largest complete block (`icc_panel`) and Krippendorff's
    interval alpha on every rating, with the N each counts."""
    ratings = _finite(values)
    annotators = sorted({a for by_annotator in ratings.values() for a in by_annotator})
    transcripts = sorted(ratings)
    panel, block = icc_panel(ratings)
    if len(block) >= 2:
        icc = icc_2_1([[ratings[t][a] for a in panel] for t in block])
        icc["annotators"] = panel
    else:
        icc = {**_empty_icc(len(block), len(panel), "no two transcripts share two annotators")}
        icc["annotators"] = panel
    matrix = np.array([[ratings[t].get(a, np.nan) for t in transcripts] for a in annotators])
    alpha = krippendorff_interval(matrix) if len(annotators) >= 2 else None
    pairable = sum(len(ratings[t]) >= 2 for t in transcripts)
    return {
        "icc_2_1": icc,
        "krippendorff_alpha_interval": {
            "value": alpha,
            "n_transcripts": len(transcripts),
            "n_pairable_transcripts": pairable,
            "n_annotators": len(annotators),
            "n_ratings": sum(len(r) for r in ratings.values()),
            "reason": None
            if alpha is not None
            else "fewer than two transcripts rated twice, or no variation",
        },
        "icc_rule": (
            "ICC(2,1) over the largest complete block: the set of two or more annotators "
            "and the transcripts every one of them rated, with the most ratings"
        ),
    }
