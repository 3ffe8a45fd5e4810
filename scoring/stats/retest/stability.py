"""Test-retest stability of the SHS (docs/design/validation-analysis.md §14.4, paper section 8.3).

`retest_report(pairs)` scores both submissions of every retest pair with
`scoring.scores.engine.score_array` and reports, for the SHS and each dimension
score, two intraclass correlations of Shrout & Fleiss (1979) with the F-based
intervals of McGraw & Wong (1996), the two-way ANOVA they come from, and
Bland & Altman's (1986, 1999) limits of agreement (scoring/stats/retest/bland_altman.py).

- ICC(2,1), McGraw & Wong's ICC(A,1): two-way random effects, absolute
  agreement, single measure. A shift of every participant's second score
  (everyone rating the system lower the second time) lowers it.
- ICC(3,1), McGraw & Wong's ICC(C,1): two-way mixed effects, consistency,
  single measure. Such a shift does not lower it.

The unit of an ICC is the retest pair. A participant can give several pairs
(one per system rated), which the F-based intervals take as independent; each
ICC also carries `ci95_clustered`, a cluster bootstrap by participant
(scoring/stats/retest/retest_bootstrap.py), and the report says under `unit` how
many pairs came from how many participants.

`icc_table(ratings)` works on any (n targets, k occasions or judges) matrix, so
that the published worked example of Shrout & Fleiss (6 targets, 4 judges)
checks it; the retest is the case k = 2. A figure that cannot be computed is
None with its reason, never a number from a degenerate table.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.shs import DIMENSION_KEYS
from scoring.scores.engine import score_array
from scoring.stats.caveats import gettext_noop, reason
from scoring.stats.estimators import f_quantile
from scoring.stats.retest.agreement import anova_table, mcgraw_wong_interval
from scoring.stats.retest.bland_altman import MIN_PAIRS, TOO_FEW, bland_altman
from scoring.stats.retest.retest_bootstrap import METHOD as CLUSTERED_METHOD
from scoring.stats.retest.retest_bootstrap import clustered_iccs, retest_replicates
from scoring.stats.validation_data import RetestPairs

ICC_METHOD = (
    "two-way ANOVA of participants x occasions (first, second); "
    "ICC(2,1) two-way random effects, absolute agreement, single measure; "
    "ICC(3,1) two-way mixed effects, consistency, single measure "
    "(Shrout & Fleiss 1979); F-based intervals of McGraw & Wong (1996), "
    "for ICC(2,1) with Satterthwaite's degrees of freedom"
)
# What was computed, for the report's reader; English in the JSON, translated when shown.
REPORT_METHOD = gettext_noop(
    "The SHS and the five dimension scores of both submissions of each retest pair, "
    "scored as everywhere in this report; per score the intraclass correlations ICC(2,1) "
    "and ICC(3,1) (Shrout & Fleiss 1979) with the intervals of McGraw & Wong (1996), and "
    "the Bland-Altman limits of agreement (Bland & Altman 1986). Stability of perceived "
    "reliability: how alike one participant's judgements of one system are, not whether "
    "the system is reliable."
)
# The same defaults as scoring.stats.nested.clustered.nested_report;
# scoring.stats.validation passes its own.
DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20260801
# Counts after a colon, so that one pair or one participant reads right too.
ONE_PAIR_EACH = gettext_noop(
    "The unit of the ICC is the retest pair, one per participant, so pairs and "
    "participants are the same units (N = {pairs})."
)
SEVERAL_PAIRS = gettext_noop(
    "The unit of the ICC is the retest pair. Pairs: {pairs}; participants: "
    "{participants}; up to {most} pairs from one participant. The F-based interval "
    "takes the pairs as independent; the clustered interval resamples participants "
    "with all their pairs."
)
NO_TARGET_VARIANCE = gettext_noop(
    "the participants do not differ ({score} is the same mean for everyone): "
    "an intraclass correlation has nothing to compare with"
)
NO_RESIDUAL = gettext_noop(
    "no residual variance (every second score is the first plus the same shift): "
    "the F interval is undefined"
)


def _single_measure(table: dict[str, Any], against: str, confidence: float) -> dict[str, Any]:
    """(MSR - MS) / (MSR + (k - 1) MS) against the `against` mean square, with the
    F interval of McGraw & Wong (1996, Table 7): F = MSR / MS on (n - 1, df) and
        FL = F / F_q(n - 1, df),  FU = F * F_q(df, n - 1),  bound = (F' - 1) / (F' + k - 1)
    at q = 1 - (1 - confidence) / 2."""
    k = table["k"]
    msr, ms, df = table["rows"]["ms"], table[against]["ms"], table[against]["df"]
    value = (msr - ms) / (msr + (k - 1) * ms)
    if ms == 0:
        return {"value": value, "ci": None, "F": None}
    quantile = 1.0 - (1.0 - confidence) / 2.0
    f = msr / ms
    f_lower = f / f_quantile(quantile, table["rows"]["df"], df)
    f_upper = f * f_quantile(quantile, df, table["rows"]["df"])
    ci = [(bound - 1.0) / (bound + k - 1.0) for bound in (f_lower, f_upper)]
    return {"value": value, "ci": ci, "F": f}


def icc_one(table: dict[str, Any], confidence: float) -> dict[str, Any]:
    """ICC(1,1), one-way random, against the within-target mean square (case 1)."""
    return _single_measure(table, "within", confidence)


def icc_consistency(table: dict[str, Any], confidence: float) -> dict[str, Any]:
    """ICC(3,1), two-way mixed, consistency, against the residual mean square (case 3)."""
    return _single_measure(table, "error", confidence)


def icc_agreement(table: dict[str, Any], confidence: float) -> dict[str, Any]:
    """ICC(2,1) = (MSR - MSE) / (MSR + (k - 1) MSE + k (MSC - MSE) / n), with McGraw &
    Wong's case 2A interval (scoring.stats.retest.agreement.mcgraw_wong_interval)."""
    n, k = table["n"], table["k"]
    msr, msc, mse = table["rows"]["ms"], table["columns"]["ms"], table["error"]["ms"]
    value = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    if mse == 0:
        return {"value": value, "ci": None, "F": None}
    lower, upper = mcgraw_wong_interval(value, msr, msc, mse, n, k, confidence)
    ci = None if lower is None or upper is None else [lower, upper]
    return {"value": value, "ci": ci, "F": msr / mse}


def icc_table(ratings: NDArray[Any], *, confidence: float = 0.95) -> dict[str, Any]:
    """ICC(1,1), ICC(2,1) and ICC(3,1) of an (n targets, k occasions) matrix with the ANOVA.

    The caller checks that the targets differ (rows' mean square > 0): without
    that every ICC is 0 / 0 or a ratio of rounding errors.
    """
    table = anova_table(ratings)
    return {
        "icc1_1": icc_one(table, confidence),
        "icc2_1": icc_agreement(table, confidence),
        "icc3_1": icc_consistency(table, confidence),
        "anova": {source: table[source] for source in ("rows", "columns", "error", "within")},
        "n": table["n"],
        "k": table["k"],
    }


def _score_stability(
    name: str, first: NDArray[np.float64], second: NDArray[np.float64], confidence: float
) -> dict[str, Any]:
    n = len(first)
    figures: dict[str, Any] = {"score": name, "n": n, "method": ICC_METHOD, "reasons": []}
    if n < MIN_PAIRS:
        figures["reasons"].append(reason(TOO_FEW, needed=MIN_PAIRS, n=n))
        figures.update(icc2_1=None, icc3_1=None, anova=None)
    else:
        ratings = np.column_stack([first, second])
        table = anova_table(ratings)
        total = sum(table[source]["ss"] for source in ("rows", "columns", "error"))
        # Equal participant means leave only rounding in the rows' sum of squares.
        if table["rows"]["ss"] <= 1e-20 * total:
            figures["reasons"].append(reason(NO_TARGET_VARIANCE, score=name))
            figures.update(icc2_1=None, icc3_1=None, anova=None)
        else:
            icc = icc_table(ratings, confidence=confidence)
            if table["error"]["ms"] == 0:
                figures["reasons"].append(reason(NO_RESIDUAL))
            figures.update(icc2_1=icc["icc2_1"], icc3_1=icc["icc3_1"], anova=icc["anova"])
    figures["estimable"] = figures["icc3_1"] is not None
    figures["bland_altman"] = bland_altman(first, second, confidence=confidence)
    return figures


def retest_scores(
    pairs: RetestPairs,
) -> dict[str, tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Score -> (first, second) arrays: "shs" and the five dimension keys."""
    first, second = score_array(pairs.first), score_array(pairs.second)
    scores = {"shs": (first.shs, second.shs)}
    for index, key in enumerate(DIMENSION_KEYS):
        scores[key] = (first.dimension_scores[:, index], second.dimension_scores[:, index])
    return scores


def icc_unit(pairs: RetestPairs) -> dict[str, Any]:
    """What one row of the ICC is: a retest pair, and how the pairs fall on participants."""
    _, per_participant = np.unique(np.asarray(pairs.participant, dtype=str), return_counts=True)
    most = int(per_participant.max()) if len(per_participant) else 0
    if most <= 1:
        return reason(ONE_PAIR_EACH, pairs=pairs.n)
    return reason(SEVERAL_PAIRS, pairs=pairs.n, participants=len(per_participant), most=most)


def retest_report(
    pairs: RetestPairs,
    *,
    confidence: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Test-retest ICCs and Bland-Altman agreement of the SHS and each dimension score,
    the ICCs also with participant-clustered intervals (`resamples` cluster-bootstrap
    draws from `seed`).

    Raises ValueError (from the engine) when an answer is not a valid SHS answer, or
    when `resamples` is below 1.
    """
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    days = np.asarray(pairs.days, dtype=np.float64)
    days = days[np.isfinite(days)]
    scores = retest_scores(pairs)
    replicates, clusters = retest_replicates(
        scores, np.asarray(pairs.participant, dtype=str), resamples=resamples, seed=seed
    )
    drawn = {"seed": seed, "resamples": resamples, "clusters": clusters}
    figures = {}
    for name, (first, second) in scores.items():
        figures[name] = _score_stability(name, first, second, confidence)
        clustered_iccs(figures[name], replicates[name], drawn, confidence)
    return {
        "method": REPORT_METHOD,
        "n": pairs.n,
        "participants": int(len(np.unique(pairs.participant))) if pairs.n else 0,
        "unit": icc_unit(pairs),
        "mean_days": float(days.mean()) if len(days) else None,
        "confidence": confidence,
        "bootstrap": {"method": CLUSTERED_METHOD, **drawn},
        "scores": figures,
    }
