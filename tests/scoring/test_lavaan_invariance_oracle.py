"""Measurement invariance against lavaan fitted live on the same simulated
groups (tests/r_oracle.py): configural, metric and scalar models of the SHS
five-factor model across three languages, the third with shifted intercepts.

lavaan runs with group.equal = "" / "loadings" / c("loadings", "intercepts")
(lavaan 0.6.14 refuses character(0)), the groups in the platform's order,
likelihood = "normal" and expected information; its multi-group RMSEA is
sqrt(G) times the single-group formula, as the platform's. The R side negates
the negatively worded items itself (q2, q4, ..., q10).
"""

import numpy as np
import pandas as pd
import pytest

from scoring.stats.factors.invariance import invariance
from tests.r_oracle import run_r
from tests.scoring.sem_examples import simulated_shs

SHS_ITEMS = [f"q{i}" for i in range(1, 11)]
# Unequal sizes, so that the platform's order (largest group first) is not the
# order of the rows; French answers to q2 and q7 shifted by 0.4 SD.
GROUPS = (("de", 400, 11), ("en", 450, 12), ("fr", 350, 13))
SHIFTED = {"fr": [1, 6]}
# Both minimise the same multi-group discrepancy: chi-square agrees to 1e-7,
# the indices to 1e-10, so these bounds see N - 1 for N in any formula.
CHI2, INDEX = 1e-5, 1e-6

LAVAAN = r"""
suppressPackageStartupMessages(library(lavaan))
shs <- read.csv("shs.csv")
negative <- paste0("q", c(2, 4, 6, 8, 10))
shs[negative] <- -shs[negative]
labels <- read.csv("groups.csv")$label
syntax <- "
  FA =~ q1 + q2
  SR =~ q3 + q4
  LC =~ q5 + q6
  DP =~ q7 + q8
  RG =~ q9 + q10"
steps <- list(configural = "", metric = "loadings", scalar = c("loadings", "intercepts"))
fits <- lapply(steps, function(equal) {
  cfa(syntax, data = shs, group = "language", group.label = labels, group.equal = equal,
      estimator = "ML", likelihood = "normal", information = "expected")
})
models <- lapply(fits, function(fit) c(
  list(converged = lavInspect(fit, "converged"), groups = lavInspect(fit, "group.label"),
       n = as.list(lavInspect(fit, "nobs"))),
  as.list(fitMeasures(fit, c("chisq", "df", "pvalue", "cfi", "tli", "rmsea")))
))
difference <- function(earlier, later) {
  # Row 2 is the later (more constrained) model; lavTestLRT names rows by expression.
  test <- lavTestLRT(fits[[earlier]], fits[[later]])
  list(chisq = test[2, "Chisq diff"], df = test[2, "Df diff"], p = test[2, "Pr(>Chisq)"])
}
result <- list(
  models = models,
  differences = list(metric = difference("configural", "metric"),
                     scalar = difference("metric", "scalar"))
)
jsonlite::write_json(result, "result.json", digits = NA, auto_unbox = TRUE)
"""


def languages():
    blocks, labels = [], []
    for language, n, seed in GROUPS:
        shift = None
        if language in SHIFTED:
            shift = np.zeros(10)
            shift[SHIFTED[language]] = 0.4
        blocks.append(simulated_shs(n, seed=seed, shift=shift))
        labels += [language] * n
    return np.vstack(blocks), np.array(labels)


@pytest.fixture(scope="module")
def both():
    answers, language = languages()
    ours = invariance(answers, language, grouping="language")
    order = [group["label"] for group in ours["groups"]]
    shs = pd.DataFrame(answers, columns=SHS_ITEMS).assign(language=language)
    theirs = run_r(LAVAAN, {"shs": shs, "groups": pd.DataFrame({"label": order})})
    return ours, theirs


def test_groups_are_fitted_in_the_same_order_and_size(both):
    ours, theirs = both
    assert ours["problem"] is None
    for step in ("configural", "metric", "scalar"):
        lavaan = theirs["models"][step]
        assert lavaan["converged"] and lavaan["groups"] == [g["label"] for g in ours["groups"]]
        assert lavaan["n"] == [g["n"] for g in ours["groups"]] == [450, 400, 350]


@pytest.mark.parametrize("step", ("configural", "metric", "scalar"))
def test_each_step_matches_lavaan(both, step):
    ours, theirs = (both[0]["models"][step], both[1]["models"][step])
    assert ours["problem"] is None
    assert ours["df"] == theirs["df"]
    assert ours["chi2"] == pytest.approx(theirs["chisq"], abs=CHI2)
    assert ours["p"] == pytest.approx(theirs["pvalue"], abs=INDEX)
    for figure in ("cfi", "tli", "rmsea"):
        assert ours[figure] == pytest.approx(theirs[figure], abs=INDEX), figure


@pytest.mark.parametrize(("step", "earlier"), (("metric", "configural"), ("scalar", "metric")))
def test_step_differences_match_lavaan(both, step, earlier):
    ours, theirs = both
    change, test = ours["differences"][step], theirs["differences"][step]
    assert change["delta_df"] == test["df"]
    assert change["delta_chi2"] == pytest.approx(test["chisq"], abs=CHI2)
    assert change["p"] == pytest.approx(test["p"], abs=INDEX)
    later_fit, earlier_fit = theirs["models"][step], theirs["models"][earlier]
    assert change["delta_cfi"] == pytest.approx(later_fit["cfi"] - earlier_fit["cfi"], abs=INDEX)
    assert change["delta_rmsea"] == pytest.approx(
        later_fit["rmsea"] - earlier_fit["rmsea"], abs=INDEX
    )


def test_shifted_intercepts_are_seen_by_both(both):
    # Not a comparison with lavaan but a check that the data test what they should:
    # the scalar step costs far more chi-square than the metric step.
    _, theirs = both
    assert theirs["differences"]["scalar"]["p"] < 1e-6 < theirs["differences"]["metric"]["p"]
