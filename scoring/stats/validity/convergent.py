"""Convergent and discriminant validity of the SHS (docs/design/validation-analysis.md §14.3, paper
8.3).

The paper expects the SHS to correlate moderately with perceived usability
(SUS), perceived explanation quality (SCS) and trust in automation, and to be
distinguishable from each. `convergent_validity(data)` correlates the SHS and
each dimension score with every companion scale a study gave, corrects each
correlation for the unreliability of both measures, and says whether the
corrected correlation stays clear of a ceiling (.85 by default) above which two
scales cannot be told apart.

- r: Pearson's r over the evaluations that have both scores, its Fisher-z
  interval and its two-sided p (scoring/stats/correlations.py).
- Reliability: Cronbach's alpha of the ten reverse-scored SHS items and of the
  companion scale's keyed items, on the same evaluations as r. A dimension has
  two items, where alpha says little: its reliability is the Spearman-Brown
  corrected correlation 2 r / (1 + r) of its positive item and its reversed
  negative item.
- Disattenuated r = r / sqrt(rel_x rel_y) (Spearman 1904), its interval the
  Fisher interval's bounds divided by the same factor and clipped to [-1, 1]
  (Hunter & Schmidt 2004, ch. 3). That interval treats both reliabilities as
  known: it ignores their own sampling error and so is too narrow when they
  rest on few evaluations (Charles 2005 gives wider confidence sets).

- Participant-clustered intervals (scoring/stats/validity/convergent_bootstrap.py): r, both
  reliabilities and the disattenuated r (the ratio itself) recomputed in each
  resample of the participant-cluster bootstrap, with the seed and resample
  count of the nested-data figures; percentile intervals under `ci95_clustered`.
  The disattenuated r's interval thus carries the reliabilities' sampling error
  (a resample with a reliability not above 0 counts as an unbounded corrected r),
  its bounds clipped to [-1, 1].
- Verdict: on that clustered interval, not on the one with the reliabilities
  taken as known, which can call a pair distinguishable only because it
  ignores how uncertain a short or unreliable scale's alpha is.

All of it is about *perceived* reliability: an SHS that stands apart from the
SUS says that people judge hallucination separately from usability, not that
any system is reliable.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.companions import COMPANION_SCALES
from scoring.instruments.shs import DIMENSION_KEYS, DIMENSIONS, ITEMS
from scoring.scores.engine import NEGATIVE_COLUMNS, POSITIVE_COLUMNS, checked_answers, score_array
from scoring.stats.caveats import gettext_noop, reason
from scoring.stats.correlations import MIN_N, fisher_interval, pearson, varies, zero_test_p
from scoring.stats.reliability.analysis import alpha_from_products, centred_products
from scoring.stats.validation_data import ValidationData
from scoring.stats.validity.convergent_bootstrap import (
    CLUSTERED_METHOD,
    companion_bootstrap,
    with_clustered,
)

DEFAULT_CEILING = 0.85
# The same defaults as scoring.stats.nested.clustered.nested_report;
# scoring.stats.validation passes its own.
DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20260801
SCORES: tuple[str, ...] = ("shs", *DIMENSION_KEYS)
_POLARITY = np.array([item.polarity for item in ITEMS], dtype=np.float64)

# What was computed, for the report's reader; English in the JSON, translated when shown.
METHOD = gettext_noop(
    "Pearson's r of each SHS score (the SHS and the five dimension scores) with each "
    "companion scale's published score, over the evaluations that have both; Fisher-z "
    "interval; p from the t test of rho = 0. Correction for attenuation (Spearman 1904): r "
    "divided by the square root of the product of both measures' reliabilities, estimated "
    "on the same evaluations; its interval is the Fisher interval divided by the same "
    "factor and clipped to [-1, 1] (Hunter & Schmidt 2004), which treats the reliabilities "
    "as known. Verdict: distinguishable when the whole participant-clustered interval of "
    "the corrected r, which re-estimates both reliabilities in every resample, stays "
    "closer to zero than the ceiling. The constructs compared are perceptions: perceived "
    "reliability against perceived usability, explanation quality or trust."
)
SHS_ALPHA_METHOD = "Cronbach's alpha of the ten reverse-scored SHS items"
DIMENSION_METHOD = (
    "two-item dimension: Spearman-Brown corrected correlation 2r / (1 + r) of the "
    "positive item and the reversed negative item, in place of Cronbach's alpha"
)
COMPANION_ALPHA_METHOD = "Cronbach's alpha of the scale's items, reversed items keyed"
DISATTENUATION_METHOD = (
    "r / sqrt(rel_x rel_y) (Spearman 1904); interval: Fisher-z bounds of r divided "
    "by sqrt(rel_x rel_y), clipped to [-1, 1] (Hunter & Schmidt 2004), reliabilities "
    "taken as known"
)

TOO_FEW = gettext_noop("needs at least {needed} evaluations with both scores, got {n}")
NO_VARIANCE = gettext_noop("{name} has the same value in every evaluation")
PERFECT_R = gettext_noop("r = {r}: Fisher's z is infinite, no interval")
NO_RELIABILITY = gettext_noop("the reliability of {name} cannot be estimated: {why}")
NOT_POSITIVE = gettext_noop("the reliability of {name} is {value}, not above 0")
NO_KEYING = gettext_noop("no item keying is known for this scale")
NO_ITEMS = gettext_noop("its item answers are missing")
ITEMS_CONSTANT = gettext_noop("its items sum to the same total in every evaluation")
PAIR_CONSTANT = gettext_noop("an item of the pair has the same answer in every evaluation")
DISTINGUISHABLE = gettext_noop(
    "Even corrected for the unreliability of both scales, {score} and {companion} "
    "share at most {share}% of their variance: they measure distinguishable constructs."
)
NOT_DISTINGUISHABLE = gettext_noop(
    "Corrected for the unreliability of both scales, {score} and {companion} may "
    "share up to {share}% of their variance (the interval reaches {bound}, not below "
    "the ceiling of {ceiling}): these data cannot tell the two constructs apart."
)
NOT_ESTIMABLE = gettext_noop("{score} and {companion} cannot be compared: {reason}.")


def cronbach_alpha(items: NDArray[Any]) -> float | None:
    """k / (k - 1) (1 - sum of item variances / variance of the total), rows complete.

    None without at least two rows and two items, or when the total is constant.
    """
    items = np.asarray(items, dtype=np.float64)
    n, k = items.shape
    if n < 2 or k < 2 or not varies(items.sum(axis=1)):
        return None
    return alpha_from_products(centred_products(items))


def spearman_brown_pair(first: NDArray[Any], second: NDArray[Any]) -> float | None:
    """2r / (1 + r) of two items, or None when r is unavailable or -1."""
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if len(first) < 2 or not varies(first) or not varies(second):
        return None
    r = float(np.corrcoef(first, second)[0, 1])
    return None if r <= -1.0 else 2.0 * r / (1.0 + r)


def score_names() -> dict[str, str]:
    """Score key -> its English name in a sentence."""
    names = {"shs": "the SHS"}
    for dimension in DIMENSIONS:
        names[dimension.key] = f"the {dimension.label_in('en')} ({dimension.key}) score"
    return names


def _companion_name(key: str) -> str:
    scale = COMPANION_SCALES.get(key)
    return scale.label_in("en") if scale else key.upper()


def _reliability(value: float | None, n: int, method: str, why: str | None) -> dict[str, Any]:
    return {"value": value, "n": n, "method": method, "reason": None if value is not None else why}


def shs_reliability(answers: NDArray[np.float64], score: str) -> dict[str, Any]:
    """Alpha of the SHS, or the Spearman-Brown reliability of one dimension's pair."""
    n = len(answers)
    if score == "shs":
        alpha = cronbach_alpha(answers * _POLARITY)
        return _reliability(alpha, n, SHS_ALPHA_METHOD, ITEMS_CONSTANT)
    index = DIMENSION_KEYS.index(score)
    positive = answers[:, POSITIVE_COLUMNS[index]]
    reversed_negative = -answers[:, NEGATIVE_COLUMNS[index]]
    value = spearman_brown_pair(positive, reversed_negative)
    return _reliability(value, n, DIMENSION_METHOD, PAIR_CONSTANT)


def companion_reliability(key: str, items: NDArray[np.float64] | None) -> dict[str, Any]:
    """Alpha of a companion scale over the rows whose items are all answered."""
    scale = COMPANION_SCALES.get(key)
    if scale is None:
        return _reliability(None, 0, COMPANION_ALPHA_METHOD, NO_KEYING)
    if items is None or len(items) == 0:
        return _reliability(None, 0, COMPANION_ALPHA_METHOD, NO_ITEMS)
    complete = items[np.isfinite(items).all(axis=1)]
    if len(complete) == 0:
        return _reliability(None, 0, COMPANION_ALPHA_METHOD, NO_ITEMS)
    alpha = cronbach_alpha(scale.keyed(complete))
    return _reliability(alpha, len(complete), COMPANION_ALPHA_METHOD, ITEMS_CONSTANT)


def _unreliable(name: str, reliability: dict[str, Any]) -> dict[str, Any] | None:
    """Why `reliability` cannot correct a correlation, or None when it can."""
    value = reliability["value"]
    if value is None:
        return reason(NO_RELIABILITY, name=name, why=reliability["reason"])
    if value <= 0:
        return reason(NOT_POSITIVE, name=name, value=round(value, 2))
    return None


def disattenuated(r: float, interval: list[float], rel_x: float, rel_y: float) -> dict[str, Any]:
    """The corrected r and its interval; a point above 1 in size is kept and noted."""
    factor = math.sqrt(rel_x * rel_y)
    corrected = r / factor
    ci = [max(-1.0, min(1.0, bound / factor)) for bound in interval]
    note = None
    if abs(corrected) > 1.0:
        note = gettext_noop(
            "the corrected r exceeds 1 in size: sampling error, or reliabilities "
            "that understate the scales' reliability"
        )
    return {
        "r": corrected,
        "ci": ci,
        "factor": factor,
        "method": DISATTENUATION_METHOD,
        "note": note,
    }


def verdict(corrected_ci: list[float], ceiling: float) -> str:
    """'distinguishable' when the corrected interval lies inside (-ceiling, ceiling);
    `judge` passes the participant-clustered interval that re-estimates the
    reliabilities in every resample.

    For the positive correlations the paper expects this is its upper bound
    staying below the ceiling; the bound farthest from zero decides, so that a
    strongly negative correlation is not taken for a distinct construct.
    """
    farthest = max(abs(bound) for bound in corrected_ci)
    return "distinguishable" if farthest < ceiling else "not distinguishable"


def _explained(figures: dict[str, Any], names: tuple[str, str], ceiling: float) -> dict[str, Any]:
    score, companion = names
    if figures["verdict"] == "not estimable":
        params = {"score": score, "companion": companion, "reason": figures["reasons"][0]["reason"]}
        message = NOT_ESTIMABLE
    else:
        farthest = max(abs(bound) for bound in judged_interval(figures))
        params = {
            "score": score,
            "companion": companion,
            "share": round(100 * farthest**2),
            "bound": round(farthest, 2),
            "ceiling": ceiling,
        }
        message = (
            DISTINGUISHABLE if figures["verdict"] == "distinguishable" else NOT_DISTINGUISHABLE
        )
    text = message.format(**params)
    return {"explanation": text[0].upper() + text[1:], "message": message, "params": params}


def _correlation(
    x: NDArray[np.float64], y: NDArray[np.float64], names: tuple[str, str], confidence: float
) -> dict[str, Any]:
    n = len(x)
    figures: dict[str, Any] = {"n": n, "r": None, "ci": None, "p": None, "reasons": []}
    if n < MIN_N:
        figures["reasons"].append(reason(TOO_FEW, needed=MIN_N, n=n))
        return figures
    for values, name in ((x, names[0]), (y, names[1])):
        if not varies(values):
            figures["reasons"].append(reason(NO_VARIANCE, name=name))
    r = pearson(x, y)
    if r is None:
        return figures
    interval = fisher_interval(r, n, 1.0 - confidence)
    if interval is None:
        figures["reasons"].append(reason(PERFECT_R, r=round(r, 2)))
        return figures
    figures.update(r=r, ci=list(interval), p=zero_test_p(r, n))
    return figures


def pair_validity(
    data: ValidationData, score: str, companion: str, *, confidence: float
) -> dict[str, Any]:
    """One SHS score against one companion scale over the evaluations that have both,
    without the verdict (`judge`, once the clustered intervals are attached)."""
    names = (score_names()[score], _companion_name(companion))
    companion_scores = np.asarray(data.companion_scores[companion], dtype=np.float64)
    rows = np.isfinite(companion_scores)
    answers = np.asarray(data.answers)[rows].astype(np.float64)
    scored = score_array(answers)
    x = scored.shs if score == "shs" else scored.dimension_scores[:, DIMENSION_KEYS.index(score)]
    figures = {
        "score": score,
        "companion": companion,
        "method": METHOD,
        "excluded": int((~rows).sum()),
        **_correlation(x, companion_scores[rows], names, confidence),
    }
    items = data.companion_items.get(companion)
    figures["reliability_score"] = shs_reliability(answers, score)
    figures["reliability_companion"] = companion_reliability(
        companion, None if items is None else np.asarray(items, dtype=np.float64)[rows]
    )
    if figures["r"] is not None:
        for name, reliability in zip(
            names, (figures["reliability_score"], figures["reliability_companion"]), strict=True
        ):
            why = _unreliable(name, reliability)
            if why:
                figures["reasons"].append(why)
    figures["disattenuated"] = None
    if not figures["reasons"]:
        figures["disattenuated"] = disattenuated(
            figures["r"],
            figures["ci"],
            figures["reliability_score"]["value"],
            figures["reliability_companion"]["value"],
        )
    return figures


def judged_interval(figures: dict[str, Any]) -> list[float]:
    """The interval the verdict rests on: the clustered one of the corrected r."""
    interval: list[float] = figures["disattenuated"]["ci95_clustered"]["interval"]
    return interval


def judge(figures: dict[str, Any], ceiling: float) -> None:
    """The verdict on the participant-clustered interval of the corrected r, whose
    resamples re-estimate both reliabilities: with them taken as known, an
    unreliable scale's interval is too narrow and 'distinguishable' can be wrong.
    Without that interval (too few resamples gave a value) it is 'not estimable'."""
    corrected = figures["disattenuated"]
    if corrected is not None and corrected["ci95_clustered"]["interval"] is None:
        figures["reasons"].append(
            {key: corrected["ci95_clustered"][key] for key in ("reason", "message", "params")}
        )
    if figures["reasons"]:
        figures["verdict"] = "not estimable"
    else:
        figures["verdict"] = verdict(judged_interval(figures), ceiling)
    names = (score_names()[figures["score"]], _companion_name(figures["companion"]))
    figures.update(_explained(figures, names, ceiling))


def convergent_validity(
    data: ValidationData,
    *,
    confidence: float = 0.95,
    ceiling: float = DEFAULT_CEILING,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """The SHS and its five dimension scores against every companion scale in `data`,
    r, the reliabilities and the disattenuated r also with participant-clustered
    intervals (`resamples` cluster-bootstrap draws from `seed`).

    Raises ValueError when an SHS answer is not a valid answer (-2..+2), or when
    `resamples` is below 1.
    """
    checked_answers(data.answers)
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    companions = list(data.companion_scores)
    pairs: dict[str, Any] = {score: {} for score in SCORES}
    for companion in companions:
        replicates, boot = companion_bootstrap(data, companion, resamples=resamples, seed=seed)
        for column, score in enumerate(SCORES):
            figures = pair_validity(data, score, companion, confidence=confidence)
            with_clustered(figures, replicates, column, boot, confidence)
            judge(figures, ceiling)
            pairs[score][companion] = figures
    return {
        "method": METHOD,
        "n": data.n,
        "confidence": confidence,
        "ceiling": ceiling,
        "bootstrap": {"method": CLUSTERED_METHOD, "seed": seed, "resamples": resamples},
        "companions": companions,
        "pairs": pairs,
    }
