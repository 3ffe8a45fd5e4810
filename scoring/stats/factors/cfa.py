"""Confirmatory factor analysis of the SHS (docs/design/validation-analysis.md §14.5, paper 8.3):
five correlated factors of two items each against one general factor.

Estimator: maximum likelihood on the answers as stored (-2..+2,
scoring.stats.validation_data), the negatively worded items reversed (negated, the
same as 6 - code on 1-5 codes: ML is blind to the shift) so that every
loading is positive. semopy has no
estimator for ordinal items: it can compute polychoric correlations
(`semopy.polycorr.hetcor`), but its WLS and DWLS weights are the fourth
moments of the raw codes, not the sampling variances of those correlations
(Muthén 1984), so chi-square and standard errors from that pairing would not
be valid. ML on five-point codes tends to understate the loadings a little
and its chi-square is not robust to non-normal items; the report says so.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.shs import ITEMS, MAX_ANSWER, MIN_ANSWER, SCALE_VALUES
from scoring.stats.caveats import gettext_noop, sentence
from scoring.stats.factors.fit import fit_measurement_model, is_usable, problem
from scoring.stats.factors.likelihood import chi2_upper
from scoring.stats.factors.model import Layout

MODELS = ("five", "one")
ESTIMATORS = ("ML",)
# Below this many evaluations ML fit indices of a 10-item model are unstable.
SMALL_N = 200
# Two dimensions correlating above this are hard to tell apart.
HIGH_CORRELATION = 0.85

NO_COMPARISON = gettext_noop("No comparison: at least one of the two models has no usable fit.")
FITS_BETTER = gettext_noop(
    "The five-factor model fits significantly better than the one-factor model "
    "(chi-square difference {chi2}, df {df}, {p})."
)
NOT_BETTER = gettext_noop(
    "The five-factor model does not fit significantly better than the one-factor "
    "model (chi-square difference {chi2}, df {df}, {p})."
)
SMALL_SAMPLE = gettext_noop(
    "ML fit indices of a ten-item model are unstable below {needed} evaluations (N = {n} here)."
)
FIVE_PROBLEM = gettext_noop("five-factor model: {problem}")
ONE_PROBLEM = gettext_noop("one-factor model: {problem}")
HARD_TO_TELL = gettext_noop(
    "{a} and {b} correlate {r}: the two dimensions are hard to tell apart in this sample."
)

# What was computed, for the report's reader; English in the JSON, translated when shown.
METHOD = gettext_noop(
    "Confirmatory factor analysis by maximum likelihood on the five-point answers, items "
    "2, 4, 6, 8 and 10 reversed so that all loadings are positive. Five-factor model: five "
    "correlated factors (FA, SR, LC, DP, RG) of two items each; one-factor model: all ten "
    "items on one factor. Each factor's first item fixes its scale. A factor with two items "
    "is identified only through its correlations with the other factors: if a factor hardly "
    "correlates with any other, the five-factor model is not identified in that sample. "
    "Chi-square is N (not N - 1) times the minimised ML discrepancy; CFI and TLI against the "
    "independence model; RMSEA with its 90% interval from the noncentral chi-square "
    "distribution; SRMR as defined by Bentler (1995). Standardised loadings with "
    "delta-method standard errors from the expected information. The five-point codes are "
    "treated as continuous, as no estimator for ordinal items with valid standard errors is "
    "available here: loadings may be slightly understated, and the chi-square is not robust "
    "to non-normal items."
)


def shs_layout(model: str) -> Layout:
    if model == "five":
        return Layout.of({item.key: item.dimension for item in ITEMS})
    if model == "one":
        return Layout.of({item.key: "SHS" for item in ITEMS})
    raise ValueError(f"unknown model {model!r}: choose one of {', '.join(MODELS)}")


def keyed_answers(answers: NDArray[Any]) -> NDArray[np.float64]:
    """Check the (n, 10) stored answers (-2..+2) and reverse the negatively worded items."""
    answers = np.asarray(answers, dtype=float)
    if answers.ndim != 2 or answers.shape[1] != len(ITEMS):
        raise ValueError(f"answers must be an (n, {len(ITEMS)}) array, got shape {answers.shape}")
    valid = np.isin(answers, SCALE_VALUES)
    if not valid.all():
        row, column = map(int, np.argwhere(~valid)[0])
        raise ValueError(
            f"row {row + 1}, {ITEMS[column].key}: {answers[row, column]:g} is not an answer "
            f"{MIN_ANSWER}..{MAX_ANSWER}"
        )
    negative = np.array([item.polarity < 0 for item in ITEMS])
    return np.where(negative, -answers, answers)


def fit_cfa(answers: NDArray[Any], *, model: str = "five", estimator: str = "ML") -> dict[str, Any]:
    """One SHS model by ML: fit figures, or a `problem` sentence and no figures."""
    if estimator not in ESTIMATORS:
        raise ValueError(
            f"unknown estimator {estimator!r}: only 'ML' is offered (semopy has no valid "
            f"estimator for ordinal items, see scoring/stats/factors/cfa.py)"
        )
    layout = shs_layout(model)
    return {"model": model, **fit_measurement_model(keyed_answers(answers), layout)}


def difference_test(five: dict[str, Any], one: dict[str, Any]) -> dict[str, Any]:
    """Chi-square difference of the nested models (one factor = all correlations 1)."""
    if not (is_usable(five) and is_usable(one)):
        return problem(NO_COMPARISON)
    chi2, df = one["chi2"] - five["chi2"], one["df"] - five["df"]
    p = chi2_upper(max(chi2, 0.0), df)
    said = sentence(FITS_BETTER if p < 0.05 else NOT_BETTER, chi2=round(chi2, 2), df=df, p=p)
    return {
        "problem": None,
        "chi2": chi2,
        "df": df,
        "p": p,
        "verdict": said["text"],
        "message": said["message"],
        "params": said["params"],
    }


def _warning_sentences(n: int, five: dict[str, Any], one: dict[str, Any]) -> list[dict[str, Any]]:
    notes = []
    if n < SMALL_N:
        notes.append(sentence(SMALL_SAMPLE, n=n, needed=SMALL_N))
    for template, fit in ((FIVE_PROBLEM, five), (ONE_PROBLEM, one)):
        if fit.get("problem"):
            # The fit's own problem, nested so that a report translates it too.
            inner = {key: fit.get(key) for key in ("problem", "message", "params")}
            notes.append(sentence(template, problem=inner))
    for pair in five.get("factor_correlations", []) if is_usable(five) else []:
        if pair["estimate"] > HIGH_CORRELATION:
            a, b = pair["factors"]
            notes.append(sentence(HARD_TO_TELL, a=a, b=b, r=round(pair["estimate"], 2)))
    return notes


def cfa_report(answers: NDArray[Any]) -> dict[str, Any]:
    """Both SHS models, their comparison and what to be careful about."""
    five = fit_cfa(answers, model="five")
    one = fit_cfa(answers, model="one")
    n = int(len(answers))
    notes = _warning_sentences(n, five, one)
    return {
        "method": METHOD,
        "estimator": "ML",
        "n": n,
        "five": five,
        "one": one,
        "difference": difference_test(five, one),
        "warnings": [note["text"] for note in notes],
        "warning_sentences": notes,
    }
