"""Confirmatory factor analysis (docs/design/validation-analysis.md §14.5) against lavaan's
published Holzinger & Swineford (1939) three-factor example, against a second optimiser
and against data simulated from a known five-factor model."""

import math

import numpy as np
import pytest

from scoring.stats.factors.cfa import cfa_report, fit_cfa
from scoring.stats.factors.fit import fit_measurement_model
from scoring.stats.factors.likelihood import Moments, minimise
from scoring.stats.factors.model import lower_bounds, patterns, start_values
from tests.scoring.sem_examples import HS_LAYOUT, cut_loadings, holzinger_swineford, simulated_shs

FIGURES = (
    "chi2",
    "df",
    "p",
    "cfi",
    "tli",
    "rmsea",
    "rmsea_ci90",
    "srmr",
    "loadings",
    "factor_correlations",
)


@pytest.fixture(scope="module")
def hs_fit():
    data, _ = holzinger_swineford()
    return fit_measurement_model(data, HS_LAYOUT)


def test_holzinger_swineford_matches_lavaan_tutorial(hs_fit):
    # lavaan tutorial, "A first example": cfa(HS.model, data = HolzingerSwineford1939)
    assert hs_fit["converged"] and hs_fit["identified"] and hs_fit["problem"] is None
    assert hs_fit["chi2"] == pytest.approx(85.306, abs=0.005)  # lavaan prints 3 decimals
    assert hs_fit["df"] == 24
    assert hs_fit["cfi"] == pytest.approx(0.931, abs=0.002)
    assert hs_fit["tli"] == pytest.approx(0.896, abs=0.002)
    assert hs_fit["rmsea"] == pytest.approx(0.092, abs=0.002)
    assert hs_fit["rmsea_ci90"] == pytest.approx([0.071, 0.114], abs=0.002)
    assert hs_fit["srmr"] == pytest.approx(0.065, abs=0.002)


def test_holzinger_swineford_standardised_solution_matches_lavaan(hs_fit):
    # lavaan standardizedSolution(): std.all of x1, x2, x3 and visual ~~ textual
    loadings = {entry["item"]: entry["estimate"] for entry in hs_fit["loadings"]}
    assert [loadings[item] for item in ("x1", "x2", "x3")] == pytest.approx(
        [0.772, 0.424, 0.581], abs=0.002
    )
    visual_textual = hs_fit["factor_correlations"][0]
    assert visual_textual["factors"] == ["visual", "textual"]
    assert visual_textual["estimate"] == pytest.approx(0.459, abs=0.002)


def test_chi_square_agrees_with_an_independent_optimiser(hs_fit):
    # scipy's L-BFGS-B on this module's own discrepancy, not semopy's SLSQP
    data, _ = holzinger_swineford()
    moments = [Moments.of(data)]
    built, kinds = patterns(HS_LAYOUT, 1)
    _, f_ml, converged = minimise(
        built, moments, start_values(built, kinds, moments), lower_bounds(kinds)
    )
    assert converged
    # semopy's SLSQP stops within 1e-3 of the minimum chi-square
    assert hs_fit["chi2"] == pytest.approx(len(data) * f_ml, abs=1e-3)


def test_rmsea_interval_inverts_the_noncentral_chi_square(hs_fit):
    from scipy.stats import ncx2

    n, df = 301, hs_fit["df"]
    low, high = hs_fit["rmsea_ci90"]
    assert ncx2.cdf(hs_fit["chi2"], df, low**2 * n * df) == pytest.approx(0.95, abs=1e-6)
    assert ncx2.cdf(hs_fit["chi2"], df, high**2 * n * df) == pytest.approx(0.05, abs=1e-6)


@pytest.fixture(scope="module")
def simulated_report():
    return cfa_report(simulated_shs(2000, seed=20261202))


def test_simulated_five_factor_loadings_are_recovered(simulated_report):
    five = simulated_report["five"]
    assert five["problem"] is None
    truth = cut_loadings()
    inside = [
        lo <= t <= hi
        for t, (lo, hi) in zip(truth, (e["ci95"] for e in five["loadings"]), strict=True)
    ]
    # A 95% interval misses now and then: all ten within 3 SE, at most one outside its interval.
    assert sum(inside) >= 9
    for t, entry in zip(truth, five["loadings"], strict=True):
        assert abs(entry["estimate"] - t) < 3 * entry["se"]
    assert all(entry["estimate"] > 0 for entry in five["loadings"])  # even items were reversed


def test_simulated_five_factors_beat_one(simulated_report):
    five, one, difference = (simulated_report[key] for key in ("five", "one", "difference"))
    assert (five["df"], one["df"]) == (25, 35)
    assert five["p"] > 0.01 and five["cfi"] > 0.99
    assert difference["chi2"] == pytest.approx(one["chi2"] - five["chi2"])
    assert difference["df"] == 10 and difference["p"] < 0.001
    assert "fits significantly better" in difference["verdict"]
    assert simulated_report["n"] == 2000 and simulated_report["estimator"] == "ML"
    assert "only through" in simulated_report["method"]


def test_constant_item_gives_a_problem_and_no_figures():
    answers = simulated_shs(300, seed=3)
    answers[:, 4] = 0
    fit = fit_cfa(answers)
    assert "q5" in fit["problem"] and "same answer" in fit["problem"]
    assert not fit["converged"] and not set(FIGURES) & set(fit)
    report = cfa_report(answers)
    assert report["difference"]["problem"] and "chi2" not in report["difference"]


def test_fewer_rows_than_items_gives_a_problem_and_no_figures():
    fit = fit_cfa(simulated_shs(8, seed=4), model="one")
    assert "of 10 items needs more rows than items (rows: 8)" in fit["problem"]
    assert not set(FIGURES) & set(fit)


def test_factor_correlation_above_one_is_reported_as_improper():
    # FA's two items share almost nothing with each other but a lot with SR:
    # ML puts the FA-SR correlation past 1.
    rng = np.random.default_rng(11)
    common = rng.normal(size=(3000, 1))
    continuous = rng.normal(size=(3000, 10))
    continuous[:, :4] = 0.9 * common + 0.45 * rng.normal(size=(3000, 4))
    continuous[:, 1] = 0.5 * common[:, 0] + rng.normal(size=3000)
    codes = np.digitize(continuous, [-1.5, -0.5, 0.5, 1.5]) - 2
    codes[:, 1::2] = -codes[:, 1::2]
    fit = fit_cfa(codes)
    assert fit["problem"].startswith("Improper solution: the factor covariance matrix")
    assert not set(FIGURES) & set(fit)


def test_bad_codes_and_estimators_are_refused():
    answers = simulated_shs(50, seed=5).astype(float)
    answers[6, 2] = 3
    with pytest.raises(ValueError, match=r"row 7, q3: 3 is not an answer -2\.\.2"):
        fit_cfa(answers)
    with pytest.raises(ValueError, match="only 'ML'"):
        fit_cfa(simulated_shs(50, seed=5), estimator="ordinal")
    assert math.isfinite(fit_cfa(simulated_shs(400, seed=5), model="one")["chi2"])
