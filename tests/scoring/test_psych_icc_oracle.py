"""Intraclass correlations against psych::ICC run live on the same tables
(tests/r_oracle.py): the test-retest ICC(2,1) and ICC(3,1) with their F-based
intervals (scoring.stats.retest.stability) and the criterion annotators'
ICC(2,1) (scoring.stats.retest.agreement.icc_2_1).

psych runs with lmer = FALSE: its mean squares then come from the two-way
ANOVA (aov), as the platform's do; with lmer = TRUE they are rebuilt from
lme4's variance components, equal only up to lme4's convergence tolerance.
Its ICC2 interval is McGraw & Wong's case 2A with Satterthwaite's df, its
ICC3 interval their case 3, both at alpha = .05.
"""

import numpy as np
import pytest

from scoring.stats.retest.agreement import icc_2_1
from scoring.stats.retest.stability import icc_table, retest_report, retest_scores
from scoring.stats.validation_data import RetestPairs
from tests.r_oracle import run_r
from tests.scoring.sem_examples import simulated_shs

PSYCH = r"""
suppressPackageStartupMessages(library(psych))
rows <- function(x) {
  icc <- ICC(x, lmer = FALSE, alpha = 0.05)$results
  one <- function(type) {
    r <- icc[icc$type == type, ]
    list(value = r$ICC, F = r$F, df1 = r$df1, df2 = r$df2, p = r$p,
         lower = r[["lower bound"]], upper = r[["upper bound"]])
  }
  list(ICC2 = one("ICC2"), ICC3 = one("ICC3"))
}
tables <- c("retest", "shs", "annotators")
result <- setNames(lapply(tables, function(name) rows(read.csv(paste0(name, ".csv")))), tables)
jsonlite::write_json(result, "result.json", digits = NA, auto_unbox = TRUE)
"""


def retest_table(n=60, seed=31):
    """(n, 2) first and second scores: the second lower by 0.4 on average, so
    that absolute agreement (ICC(2,1)) and consistency (ICC(3,1)) differ."""
    rng = np.random.default_rng(seed)
    person = rng.normal(size=n)
    return np.column_stack(
        [person + 0.5 * rng.normal(size=n), person - 0.4 + 0.5 * rng.normal(size=n)]
    )


def retest_pairs(n=80, seed=32):
    """SHS answers given twice; the second time some positively worded answers one lower."""
    rng = np.random.default_rng(seed)
    first = simulated_shs(n, seed=seed)
    second = first.copy()
    second[:, ::2] -= rng.random((n, 5)) < 0.4
    second = np.clip(second + rng.choice([-1, 0, 0, 0, 1], size=second.shape), -2, 2)
    return RetestPairs(first, second, np.arange(n), np.full(n, 14.0))


def annotator_table(n=30, seed=33):
    """Two annotators' ratings (0..1) of n transcripts; the second rates higher."""
    rng = np.random.default_rng(seed)
    truth = rng.uniform(0.2, 0.8, size=n)
    return np.clip(
        np.column_stack(
            [truth + 0.08 * rng.normal(size=n), truth + 0.06 + 0.08 * rng.normal(size=n)]
        ),
        0.0,
        1.0,
    )


@pytest.fixture(scope="module")
def psych():
    pairs = retest_pairs()
    first, second = retest_scores(pairs)["shs"]
    tables = {
        "retest": retest_table(),
        "shs": np.column_stack([first, second]),
        "annotators": annotator_table(),
    }
    return run_r(PSYCH, tables)


def assert_same_icc(ours, theirs, name):
    assert ours["value"] == pytest.approx(theirs["value"], abs=1e-10), name
    assert ours["ci"] == pytest.approx([theirs["lower"], theirs["upper"]], abs=1e-8), name
    assert ours["F"] == pytest.approx(theirs["F"], rel=1e-10), name


def test_retest_icc_table_matches_psych(psych):
    icc = icc_table(retest_table())
    assert_same_icc(icc["icc2_1"], psych["retest"]["ICC2"], "ICC(2,1)")
    assert_same_icc(icc["icc3_1"], psych["retest"]["ICC3"], "ICC(3,1)")
    assert icc["anova"]["rows"]["df"] == psych["retest"]["ICC3"]["df1"]
    assert icc["anova"]["error"]["df"] == psych["retest"]["ICC3"]["df2"]
    # The shift makes the two differ, so a swap of the two would be seen.
    assert icc["icc3_1"]["value"] - icc["icc2_1"]["value"] > 0.02


def test_retest_report_of_the_shs_matches_psych(psych):
    shs = retest_report(retest_pairs(), resamples=20)["scores"]["shs"]
    assert shs["reasons"] == []
    assert_same_icc(shs["icc2_1"], psych["shs"]["ICC2"], "ICC(2,1)")
    assert_same_icc(shs["icc3_1"], psych["shs"]["ICC3"], "ICC(3,1)")


def test_annotator_icc_2_1_matches_psych(psych):
    ours, theirs = icc_2_1(annotator_table()), psych["annotators"]["ICC2"]
    assert ours["reason"] is None and ours["ci_note"] is None
    assert ours["value"] == pytest.approx(theirs["value"], abs=1e-10)
    assert [ours["ci_low"], ours["ci_high"]] == pytest.approx(
        [theirs["lower"], theirs["upper"]], abs=1e-8
    )
    assert ours["F"] == pytest.approx(theirs["F"], rel=1e-10)
    assert (ours["df1"], ours["df2"]) == (theirs["df1"], theirs["df2"])
    assert ours["p"] == pytest.approx(theirs["p"], rel=1e-8, abs=1e-300)
