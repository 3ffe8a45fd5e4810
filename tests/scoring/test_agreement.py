"""Annotator agreement (docs/design/criterion.md §13.3) against published worked examples
and against the formulas written out here with loops."""

import math

import numpy as np
import pytest
from scipy import stats

from scoring.stats.retest.agreement import (
    icc_2_1,
    icc_panel,
    krippendorff_interval,
    mcgraw_wong_interval,
    measure_agreement,
)

# Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing
# rater reliability. Psychological Bulletin, 86, 420-428. Table 2: 6 targets x 4 judges.
SHROUT_FLEISS = [
    [9, 2, 5, 8],
    [6, 1, 3, 2],
    [8, 4, 6, 8],
    [7, 1, 2, 6],
    [10, 5, 6, 9],
    [6, 2, 4, 7],
]
NA = np.nan
# Krippendorff, K. (2011). Computing Krippendorff's alpha-reliability. Section C:
# 4 observers x 12 units, values 1-5, missing cells; alpha (interval) = 0.849.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3],
    [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA],
]


def anova_by_loops(table):
    n, k = len(table), len(table[0])
    grand = sum(map(sum, table)) / (n * k)
    row_means = [sum(row) / k for row in table]
    col_means = [sum(row[j] for row in table) / n for j in range(k)]
    ss_rows = k * sum((m - grand) ** 2 for m in row_means)
    ss_cols = n * sum((m - grand) ** 2 for m in col_means)
    ss_total = sum((x - grand) ** 2 for row in table for x in row)
    ss_error = ss_total - ss_rows - ss_cols
    return ss_rows / (n - 1), ss_cols / (k - 1), ss_error / ((n - 1) * (k - 1))


def test_icc_2_1_reproduces_shrout_and_fleiss():
    result = icc_2_1(SHROUT_FLEISS)
    assert round(result["value"], 2) == 0.29  # Shrout & Fleiss (1979), Table 4, ICC(2,1)
    # Their Table 3: BMS = 11.24, EMS = 1.02, so F = 11.02 with 5 and 15 df.
    assert result["F"] == pytest.approx(11.24 / 1.02, abs=0.01)
    assert (result["df1"], result["df2"]) == (5, 15)
    assert result["p"] == pytest.approx(stats.f.sf(result["F"], 5, 15), rel=1e-10)
    assert (result["n_targets"], result["n_raters"]) == (6, 4)


def test_icc_2_1_interval_follows_mcgraw_and_wong():
    # McGraw, K. O., & Wong, S. P. (1996). Forming inferences about some intraclass
    # correlation coefficients. Psychological Methods, 1, 30-46, Table 7, ICC(A,1),
    # written out here with scipy's F quantiles.
    msr, msc, mse = anova_by_loops(SHROUT_FLEISS)
    n, k = 6, 4
    icc = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    a = k * icc / (n * (1 - icc))
    b = 1 + k * icc * (n - 1) / (n * (1 - icc))
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
    f_star = stats.f.ppf(0.975, n - 1, v)
    f_star_lower = stats.f.ppf(0.975, v, n - 1)
    low = n * (msr - f_star * mse) / (f_star * (k * msc + (k * n - k - n) * mse) + n * msr)
    high = (
        n * (f_star_lower * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_star_lower * msr)
    )
    result = icc_2_1(SHROUT_FLEISS)
    assert result["value"] == pytest.approx(icc, abs=1e-12)
    assert (result["ci_low"], result["ci_high"]) == pytest.approx((low, high), abs=1e-8)
    # The same data in R's psych::ICC: ICC2 = 0.29, 95% bounds 0.019 and 0.76.
    assert (round(result["ci_low"], 3), round(result["ci_high"], 2)) == (0.019, 0.76)


def test_icc_of_identical_raters_is_one_without_an_infinite_f():
    result = icc_2_1([[1, 1], [2, 2], [3, 3]])
    assert result["value"] == pytest.approx(1.0)
    assert result["F"] is None and result["ci_low"] is None and result["reason"]


@pytest.mark.parametrize(
    "table",
    [[[1, 2, 3]], [[1], [2]], [[1, 2], [NA, 3], [2, 2]], [[2, 2], [2, 2], [2, 2]]],
)
def test_icc_of_degenerate_tables_is_none_with_a_reason(table):
    result = icc_2_1(table)
    assert result["value"] is None and result["F"] is None and result["reason"]


def test_krippendorff_interval_reproduces_the_2011_example():
    assert round(krippendorff_interval(KRIPPENDORFF_2011), 3) == 0.849


def alpha_by_pairs(data):
    """Interval alpha from its definition: observed against expected squared
    differences over the pairable values (Krippendorff 2011, section C)."""
    units = [[v for v in column if not math.isnan(v)] for column in np.asarray(data).T]
    units = [u for u in units if len(u) >= 2]
    values = [v for u in units for v in u]
    n = len(values)
    observed = (
        sum(
            (u[i] - u[j]) ** 2 / (len(u) - 1)
            for u in units
            for i in range(len(u))
            for j in range(len(u))
            if i != j
        )
        / n
    )
    expected = sum((a - b) ** 2 for a in values for b in values) / (n * (n - 1))
    return 1 - observed / expected


def test_krippendorff_interval_matches_its_definition_on_random_data():
    rng = np.random.default_rng(4)
    data = rng.integers(0, 11, size=(5, 40)).astype(float) / 10
    data[rng.random(size=data.shape) < 0.3] = np.nan
    assert krippendorff_interval(data) == pytest.approx(alpha_by_pairs(data), abs=1e-10)
    assert alpha_by_pairs(KRIPPENDORFF_2011) == pytest.approx(0.849, abs=5e-4)


@pytest.mark.parametrize(
    "data",
    [[[1, NA, NA], [NA, 2, NA]], [[3, 3, 3], [3, 3, 3]], [[1, 2, 3]]],
)
def test_krippendorff_without_pairable_variation_is_none(data):
    assert krippendorff_interval(data) is None


def test_the_icc_panel_is_the_largest_complete_block():
    # A rated all ten transcripts, B the first five, C the last five: {A, B} and
    # {A, C} each hold 10 ratings; ties go to the alphabetically first panel.
    values = {
        f"t{i}": {"A": i / 10, ("B" if i < 5 else "C"): i / 10 + 0.05 * (i % 2)} for i in range(10)
    }
    panel, block = icc_panel(values)
    assert panel == ["A", "B"] and block == ["t0", "t1", "t2", "t3", "t4"]
    values["t5"]["B"] = 0.5  # now A and B share six transcripts
    assert icc_panel(values)[1] == ["t0", "t1", "t2", "t3", "t4", "t5"]


def test_measure_agreement_reports_both_coefficients_and_their_n():
    rng = np.random.default_rng(9)
    truth = rng.random(30)
    values = {
        f"t{i:02d}": {
            a: float(np.clip(truth[i] + rng.normal(scale=0.1), 0, 1))
            for a in ("ann1", "ann2", "ann3")
        }
        for i in range(30)
    }
    del values["t00"]["ann3"]
    values["t01"]["ann2"] = float("nan")  # missing, not a rating
    result = measure_agreement(values)
    icc = result["icc_2_1"]
    assert icc["annotators"] == ["ann1", "ann2", "ann3"] and icc["n_targets"] == 28
    table = [
        [values[t][a] for a in ("ann1", "ann2", "ann3")]
        for t in sorted(values)
        if t not in ("t00", "t01")
    ]
    assert icc["value"] == pytest.approx(icc_2_1(table)["value"], abs=1e-12)
    alpha = result["krippendorff_alpha_interval"]
    assert (alpha["n_transcripts"], alpha["n_pairable_transcripts"], alpha["n_annotators"]) == (
        30,
        30,
        3,
    )
    assert alpha["n_ratings"] == 88
    matrix = [[values[t].get(a, NA) for t in sorted(values)] for a in ("ann1", "ann2", "ann3")]
    assert alpha["value"] == pytest.approx(alpha_by_pairs(matrix), abs=1e-10)
    assert alpha["value"] > 0.7


def test_measure_agreement_with_one_annotator_has_reasons_not_figures():
    result = measure_agreement({"t1": {"A": 0.5}, "t2": {"A": 0.7}})
    assert result["icc_2_1"]["value"] is None and result["icc_2_1"]["reason"]
    assert result["krippendorff_alpha_interval"]["value"] is None
    assert result["krippendorff_alpha_interval"]["reason"]


def test_an_icc_interval_below_minus_one_is_cut_there_and_says_why():
    # Two annotators who disagree on six transcripts: McGraw and Wong's lower bound
    # falls below -1, which ICC(2,1) with two raters can never reach.
    table = [[0.64, 0.34], [0.04, 0.68], [0.81, 0.4], [0.61, 0.49], [0.54, 0.6], [0.82, 0.13]]
    arr = np.asarray(table)
    anova = {
        "msr": 2 * np.var(arr.mean(axis=1), ddof=1),
        "msc": 6 * np.var(arr.mean(axis=0), ddof=1),
    }
    residual = arr - arr.mean(axis=1, keepdims=True) - arr.mean(axis=0) + arr.mean()
    mse = (residual**2).sum() / 5
    value = (anova["msr"] - mse) / (anova["msr"] + mse + 2 * (anova["msc"] - mse) / 6)
    raw_low, raw_high = mcgraw_wong_interval(value, anova["msr"], anova["msc"], mse, 6, 2)
    assert raw_low < -1.0 < raw_high
    result = icc_2_1(table)
    assert result["value"] == pytest.approx(value, abs=1e-12)
    assert result["ci_low"] == -1.0 and result["ci_high"] == pytest.approx(raw_high)
    assert "cut at -1.0" in result["ci_note"]["reason"]


def test_an_icc_of_two_transcripts_has_no_interval_and_says_why():
    result = icc_2_1([[0.2, 0.3], [0.9, 0.1]])
    assert result["value"] is not None
    assert result["ci_low"] is None and result["ci_high"] is None
    assert "needs at least 5 transcripts" in result["ci_note"]["reason"]


def test_an_icc_interval_wholly_below_its_floor_is_withheld():
    result = icc_2_1([[0.1, 0.9], [0.9, 0.1], [0.5, 0.5], [0.2, 0.8], [0.8, 0.25]])
    assert result["value"] < -1.0
    assert result["ci_low"] is None and "disagree systematically" in result["ci_note"]["reason"]
