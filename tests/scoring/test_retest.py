"""Test-retest statistics (scoring/stats/retest/stability.py,
scoring/stats/retest/bland_altman.py) against the published worked example of
Shrout & Fleiss (1979) and independent computations."""

import math
import statistics
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
from scipy import stats

from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.retest.agreement import anova_table
from scoring.stats.retest.bland_altman import bland_altman
from scoring.stats.retest.stability import icc_table, retest_report
from scoring.stats.validation_data import RetestPairs
from scoring.web.bland_altman_plot import bland_altman_svg
from tests.scoring.test_agreement import SHROUT_FLEISS as SHROUT_FLEISS_TABLE_2

# Shrout & Fleiss (1979), Table 2: six targets rated by four judges.
SHROUT_FLEISS = np.array(SHROUT_FLEISS_TABLE_2, dtype=float)


def test_icc_reproduces_shrout_and_fleiss_table_2():
    icc = icc_table(SHROUT_FLEISS)
    # Their text: ICC(1,1) = .17, ICC(2,1) = .29, ICC(3,1) = .71.
    assert round(icc["icc1_1"]["value"], 2) == 0.17
    assert round(icc["icc2_1"]["value"], 2) == 0.29
    assert round(icc["icc3_1"]["value"], 2) == 0.71


def test_mean_squares_match_shrout_and_fleiss_table_3_and_statsmodels():
    import pandas as pd
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    table = anova_table(SHROUT_FLEISS)
    # Shrout & Fleiss Table 3: BMS 11.24, WMS 6.26, JMS 32.49, EMS 1.02.
    assert round(table["rows"]["ms"], 2) == 11.24
    assert round(table["within"]["ms"], 2) == 6.26
    assert round(table["columns"]["ms"], 2) == 32.49
    assert round(table["error"]["ms"], 2) == 1.02
    # The same ANOVA by ordinary least squares with target and judge factors.
    long = pd.DataFrame(
        [
            {"target": t, "judge": j, "rating": SHROUT_FLEISS[t, j]}
            for t in range(6)
            for j in range(4)
        ]
    )
    anova = anova_lm(ols("rating ~ C(target) + C(judge)", data=long).fit())
    assert table["rows"]["ss"] == pytest.approx(anova.loc["C(target)", "sum_sq"])
    assert table["columns"]["ss"] == pytest.approx(anova.loc["C(judge)", "sum_sq"])
    assert table["error"]["ss"] == pytest.approx(anova.loc["Residual", "sum_sq"])
    assert table["error"]["df"] == anova.loc["Residual", "df"] == 15


def _mcgraw_wong_intervals(ratings: np.ndarray, confidence: float) -> dict:
    """McGraw & Wong (1996) Table 7, cases 1, 2A and 3, written out with scipy.stats.f."""
    n, k = ratings.shape
    grand = ratings.mean()
    msr = k * ((ratings.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    msc = n * ((ratings.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    sse = (
        (ratings - ratings.mean(axis=1, keepdims=True) - ratings.mean(axis=0) + grand) ** 2
    ).sum()
    mse = sse / ((n - 1) * (k - 1))
    msw = (((ratings - ratings.mean(axis=1, keepdims=True)) ** 2).sum()) / (n * (k - 1))
    q = 1 - (1 - confidence) / 2

    def bounds(f_obs, df1, df2):
        fl = f_obs / stats.f.ppf(q, df1, df2)
        fu = f_obs * stats.f.ppf(q, df2, df1)
        return [(fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1)]

    rho = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    a = k * rho / (n * (1 - rho))
    b = 1 + k * rho * (n - 1) / (n * (1 - rho))
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
    f_star, f_star_upper = stats.f.ppf(q, n - 1, v), stats.f.ppf(q, v, n - 1)
    c = k * msc + (k * n - k - n) * mse
    return {
        "icc1_1": bounds(msr / msw, n - 1, n * (k - 1)),
        "icc2_1": [
            n * (msr - f_star * mse) / (f_star * c + n * msr),
            n * (f_star_upper * msr - mse) / (c + n * f_star_upper * msr),
        ],
        "icc3_1": bounds(msr / mse, n - 1, (n - 1) * (k - 1)),
    }


@pytest.mark.parametrize("confidence", [0.95, 0.90])
def test_icc_intervals_match_mcgraw_and_wong_written_out(confidence):
    icc = icc_table(SHROUT_FLEISS, confidence=confidence)
    expected = _mcgraw_wong_intervals(SHROUT_FLEISS, confidence)
    for name, interval in expected.items():
        assert icc[name]["ci"] == pytest.approx(interval, abs=1e-9), name


def test_icc_intervals_match_the_published_output_of_psych_for_table_2():
    # psych::ICC(sf) (Revelle), documented for these data: ICC1 [-0.13, 0.72],
    # ICC2 [0.02, 0.76], ICC3 [0.34, 0.95].
    icc = icc_table(SHROUT_FLEISS)
    assert [round(bound, 2) for bound in icc["icc1_1"]["ci"]] == [-0.13, 0.72]
    assert [round(bound, 2) for bound in icc["icc2_1"]["ci"]] == [0.02, 0.76]
    assert [round(bound, 2) for bound in icc["icc3_1"]["ci"]] == [0.34, 0.95]


def _answers_with_shs(totals: list[int]) -> np.ndarray:
    """One answer row per SHS total sum(a - b): the FA pair carries it, as far as it goes."""
    rows = []
    for total in totals:
        row = [0] * 10
        rest = total
        for a_column, b_column in ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9)):
            step = max(-4, min(4, rest))
            row[a_column], row[b_column] = (step + 1) // 2, -(step // 2)
            rest -= row[a_column] - row[b_column]
        rows.append(row)
    return np.array(rows)


def _pairs(first_totals, second_totals, days=None) -> RetestPairs:
    m = len(first_totals)
    return RetestPairs(
        first=_answers_with_shs(first_totals),
        second=_answers_with_shs(second_totals),
        participant=np.array([f"P{i}" for i in range(m)]),
        days=np.array(days if days is not None else [14.0] * m),
    )


def test_retest_report_icc_of_shs_equals_the_sum_and_difference_identity():
    first = [10, -4, 3, 20, 0, -12, 7, 15]
    second = [8, -2, 5, 17, -3, -10, 9, 11]
    report = retest_report(_pairs(first, second, days=[7, 14, 21, 14, 14, 7, 28, 14]))
    x, y = np.array(first) / 20, np.array(second) / 20
    # For two occasions, MSR = var(x + y) / 2 and MSE = var(x - y) / 2.
    var_sum, var_diff = np.var(x + y, ddof=1), np.var(x - y, ddof=1)
    mean_diff, n = float(np.mean(y - x)), len(x)
    shs = report["scores"]["shs"]
    assert shs["n"] == 8
    assert shs["icc3_1"]["value"] == pytest.approx((var_sum - var_diff) / (var_sum + var_diff))
    assert shs["icc2_1"]["value"] == pytest.approx(
        (var_sum - var_diff) / (var_sum + var_diff + 2 * mean_diff**2 - 2 * var_diff / n)
    )
    assert shs["anova"]["error"]["df"] == 7
    assert report["mean_days"] == pytest.approx(np.mean([7, 14, 21, 14, 14, 7, 28, 14]))
    assert report["n"] == 8 and report["participants"] == 8
    assert set(report["scores"]) == {"shs", *DIMENSION_KEYS}
    assert "Shrout & Fleiss" in shs["method"] and "McGraw & Wong" in shs["method"]


def test_bland_altman_against_a_hand_computation():
    first = np.array([0.10, -0.20, 0.35, 0.50, 0.00, -0.45])
    second = np.array([0.15, -0.25, 0.30, 0.65, 0.10, -0.40])
    figures = bland_altman(first, second)
    differences = [0.05, -0.05, -0.05, 0.15, 0.10, 0.05]
    bias, sd, n = statistics.mean(differences), statistics.stdev(differences), 6
    z, t = stats.norm.ppf(0.975), stats.t.ppf(0.975, n - 1)
    assert figures["bias"] == pytest.approx(bias)
    assert figures["sd"] == pytest.approx(sd)
    assert figures["lower"] == pytest.approx(bias - z * sd)
    assert figures["upper"] == pytest.approx(bias + z * sd)
    assert figures["bias_ci"] == pytest.approx(
        [bias - t * sd / math.sqrt(n), bias + t * sd / math.sqrt(n)]
    )
    # Bland & Altman (1999) 4.1: var(limit) = (1/n + z^2 / (2 (n - 1))) s^2.
    se_limit = sd * math.sqrt(1 / n + z**2 / (2 * (n - 1)))
    assert figures["upper_ci"] == pytest.approx(
        [bias + z * sd - t * se_limit, bias + z * sd + t * se_limit]
    )
    assert figures["lower_ci"] == pytest.approx(
        [bias - z * sd - t * se_limit, bias - z * sd + t * se_limit]
    )
    # Close to their 1986 shortcut sqrt(3 s^2 / n) at 95 %.
    assert se_limit == pytest.approx(math.sqrt(3 * sd**2 / n), rel=0.15)
    assert figures["n"] == 6 and "Bland & Altman" in figures["method"]


def test_constant_scores_are_not_estimable_with_a_reason_and_no_numbers():
    report = retest_report(_pairs([4] * 5, [4] * 5))
    shs = report["scores"]["shs"]
    assert shs["estimable"] is False
    assert shs["icc2_1"] is None and shs["icc3_1"] is None and shs["anova"] is None
    assert "do not differ" in shs["reasons"][0]["reason"]
    assert shs["reasons"][0]["params"] == {"score": "shs"}


def test_too_few_pairs_are_not_estimable():
    report = retest_report(_pairs([4, 8], [5, 9]))
    shs = report["scores"]["shs"]
    assert shs["icc3_1"] is None and "at least 3" in shs["reasons"][0]["reason"]
    assert shs["bland_altman"]["estimable"] is False and shs["bland_altman"]["bias"] is None


def test_a_uniform_shift_keeps_consistency_perfect_and_has_no_interval():
    report = retest_report(_pairs([0, 4, 8, 12], [2, 6, 10, 14]))
    shs = report["scores"]["shs"]
    assert shs["icc3_1"]["value"] == pytest.approx(1.0)
    assert shs["icc3_1"]["ci"] is None
    assert shs["icc2_1"]["value"] < 1.0  # absolute agreement sees the shift
    assert any("no residual variance" in entry["reason"] for entry in shs["reasons"])


def test_invalid_answers_are_refused():
    pairs = _pairs([1, 2, 3], [1, 2, 3])
    bad = RetestPairs(pairs.first + 3, pairs.second, pairs.participant, pairs.days)
    with pytest.raises(ValueError, match="outside"):
        retest_report(bad)


def test_bland_altman_svg_draws_points_bias_and_limits():
    first = np.array([0.10, -0.20, 0.35, 0.50, 0.00, -0.45])
    second = np.array([0.15, -0.25, 0.30, 0.65, 0.10, -0.40])
    svg = bland_altman_svg(first, second, score_label="SHS")
    root = ElementTree.fromstring(svg)
    namespace = "{http://www.w3.org/2000/svg}"
    assert len(root.findall(f"{namespace}circle")) == 6
    lines = {
        line.get("class"): line for line in root.findall(f"{namespace}line") if line.get("class")
    }
    assert set(lines) == {"bias", "lower", "upper"}
    # Higher on the page is a larger difference: y grows downwards.
    assert (
        float(lines["upper"].get("y1"))
        < float(lines["bias"].get("y1"))
        < float(lines["lower"].get("y1"))
    )
    texts = " ".join(text.text or "" for text in root.iter(f"{namespace}text"))
    assert "Mean of the two SHS scores" in texts and "Second − first SHS" in texts
    assert "bias +0.04" in texts  # mean difference 0.25 / 6


def test_bland_altman_svg_with_too_few_pairs_has_no_lines():
    svg = bland_altman_svg(np.array([0.1]), np.array([0.2]))
    root = ElementTree.fromstring(svg)
    assert not [line for line in root.iter("{http://www.w3.org/2000/svg}line") if line.get("class")]


def test_bland_altman_svg_speaks_the_active_language():
    from django.utils import translation

    first = np.array([0.10, -0.20, 0.35, 0.50, 0.00, -0.45])
    second = np.array([0.15, -0.25, 0.30, 0.65, 0.10, -0.40])
    with translation.override("de"):
        svg = bland_altman_svg(first, second)
    assert "untere Grenze" in svg and "Mittelwert der beiden SHS-Werte" in svg
    assert "Bias +0,04" in svg  # the number in German, the coordinates still with points
    assert not [x for x in ElementTree.fromstring(svg).iter() if "," in (x.get("cx") or "")]
