"""The statistical building blocks, each against an independent computation.

The app calls scipy.stats and scipy.optimize; the hand-written versions it used
before (tests/scoring/handwritten_estimators.py) are the regression oracle: the
figures an analysis reports must not move by more than these tolerances.
"""

import warnings

import numpy as np
import pytest
from scipy import optimize, stats

from scoring.stats import estimators
from scoring.stats.reliability.analysis import feldt_interval
from tests.scoring import handwritten_estimators as handwritten


def sample(kind: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "normal":
        return rng.normal(size=n)
    if kind == "skewed":
        return rng.exponential(size=n)
    if kind == "shs":  # overall SHS values lie on a grid of twentieths
        return rng.integers(-40, 41, size=n) / 20
    return rng.integers(-2, 3, size=n).astype(float)


@pytest.mark.parametrize("kind", ["normal", "skewed", "shs", "coarse"])
@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 11, 12, 13, 20, 50, 386, 1000])
def test_shapiro_wilk_matches_scipy(kind, n):
    values = sample(kind, n, seed=n)
    if np.ptp(values) == 0:
        pytest.skip("all values equal")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = stats.shapiro(values)
    w, p = estimators.shapiro_wilk(values)
    assert w == pytest.approx(expected.statistic, abs=1e-7)
    assert p == pytest.approx(expected.pvalue, abs=1e-6)


@pytest.mark.parametrize("kind", ["normal", "skewed", "shs", "coarse"])
@pytest.mark.parametrize("n", [3, 4, 5, 6, 7, 11, 12, 13, 20, 50, 386, 1000, 5001, 100_000])
def test_shapiro_wilk_agrees_with_the_handwritten_version(kind, n):
    values = sample(kind, n, seed=n + 1)
    if np.ptp(values) == 0:
        pytest.skip("all values equal")
    w, p = estimators.shapiro_wilk(values)
    expected_w, expected_p = handwritten.shapiro_wilk(values)
    assert w == pytest.approx(expected_w, abs=1e-7)
    # Where W lies within 1e-4 of 1 (normal values by the ten thousand), scipy
    # forms 1 - W with about five digits fewer than the hand-written version did,
    # and p moves by up to 3e-6 (measured: 2.3e-6 at n = 100,000). SHS scores lie
    # on a grid of twentieths, so their W stays far from 1; and above n = 5000
    # the analysis already notes that p is not validated.
    near_one = 1 - expected_w < 1e-4
    assert p == pytest.approx(expected_p, abs=1e-5 if near_one else 1e-6)


def test_shapiro_wilk_on_the_worked_example_of_shapiro_and_wilk_1965():
    # Biometrika 52, p. 606, Example 1: the weights in pounds of 11 men. The
    # paper finds W = 0.79 with its tabled coefficients, below the 1 % point
    # of W for n = 11 (0.792, its Table 6): normality is rejected at p < .01.
    weights = np.array([148, 154, 158, 160, 161, 162, 166, 170, 182, 195, 236], dtype=float)
    for w, p in (estimators.shapiro_wilk(weights), handwritten.shapiro_wilk(weights)):
        assert round(w, 2) == 0.79
        assert w < 0.792
        assert 0.001 < p < 0.01


def test_shapiro_wilk_above_5000_values_does_not_warn():
    # The analysis adds its own note that p is unvalidated there (SHAPIRO_VALIDATED_N).
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        estimators.shapiro_wilk(sample("normal", 5001, seed=1))


def test_shapiro_wilk_refuses_too_few_or_equal_values():
    with pytest.raises(ValueError, match="at least 3"):
        estimators.shapiro_wilk(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="not all equal"):
        estimators.shapiro_wilk(np.zeros(10))


@pytest.mark.parametrize("n", [3, 4, 10, 386])
def test_skewness_and_kurtosis_are_the_bias_corrected_spss_estimators(n):
    values = sample("skewed", n, seed=7)
    # SPSS's formulas written out (Joanes and Gill 1998, G1 and G2).
    mean = sum(values) / n
    m2 = sum((x - mean) ** 2 for x in values) / n
    m3 = sum((x - mean) ** 3 for x in values) / n
    m4 = sum((x - mean) ** 4 for x in values) / n
    g1, g2 = m3 / m2**1.5, m4 / m2**2 - 3
    skewness = g1 * (n * (n - 1)) ** 0.5 / (n - 2)
    assert estimators.skewness(values) == pytest.approx(skewness, abs=1e-9)
    assert estimators.skewness(values) == pytest.approx(handwritten.skewness(values), abs=1e-9)
    assert estimators.skewness(values) == pytest.approx(stats.skew(values, bias=False), abs=1e-9)
    if n >= 4:
        kurtosis = ((n + 1) * g2 + 6) * (n - 1) / ((n - 2) * (n - 3))
        assert estimators.excess_kurtosis(values) == pytest.approx(kurtosis, abs=1e-9)
        assert estimators.excess_kurtosis(values) == pytest.approx(
            handwritten.excess_kurtosis(values), abs=1e-9
        )
        assert estimators.excess_kurtosis(values) == pytest.approx(
            stats.kurtosis(values, fisher=True, bias=False), abs=1e-9
        )


@pytest.mark.parametrize(("r", "n"), [(0.0, 10), (0.3, 386), (-0.72, 50), (0.999, 5), (1.0, 30)])
def test_pearson_p_is_the_two_sided_t_test(r, n):
    if abs(r) == 1:
        assert estimators.pearson_p(r, n) == 0.0
        return
    t = r * ((n - 2) / (1 - r * r)) ** 0.5
    assert estimators.pearson_p(r, n) == pytest.approx(2 * stats.t.sf(abs(t), n - 2), rel=1e-9)


def test_chi2_tail_and_f_quantile_match_the_distributions():
    assert estimators.chi2_upper_tail(187.3, 4) == pytest.approx(stats.chi2.sf(187.3, 4), rel=1e-9)
    assert estimators.f_quantile(0.975, 385, 3465) == pytest.approx(
        stats.f.ppf(0.975, 385, 3465), rel=1e-9
    )


@pytest.mark.parametrize(("alpha", "n", "k"), [(0.87, 386, 10), (0.5, 12, 10), (-0.2, 5, 10)])
def test_feldt_interval_against_a_direct_f_distribution_computation(alpha, n, k):
    lower, upper = feldt_interval(alpha, n, k)
    df1, df2 = n - 1, (n - 1) * (k - 1)
    # Feldt (1965): (1 - alpha) / (1 - alpha_hat) ~ F(df1, df2). At the bounds
    # the F distribution function must be 0.975 and 0.025.
    assert stats.f.cdf((1 - lower) / (1 - alpha), df1, df2) == pytest.approx(0.975, abs=1e-9)
    assert stats.f.cdf((1 - upper) / (1 - alpha), df1, df2) == pytest.approx(0.025, abs=1e-9)
    # And the quantiles found by root search on the distribution function.
    upper_f = optimize.brentq(lambda x: stats.f.cdf(x, df1, df2) - 0.975, 1e-9, 1e3, xtol=1e-14)
    lower_f = optimize.brentq(lambda x: stats.f.cdf(x, df1, df2) - 0.025, 1e-9, 1e3, xtol=1e-14)
    assert lower == pytest.approx(1 - (1 - alpha) * upper_f, abs=1e-9)
    assert upper == pytest.approx(1 - (1 - alpha) * lower_f, abs=1e-9)
    assert lower < alpha < upper


def test_feldt_interval_of_the_paper_contains_its_point_estimate():
    # The paper reports alpha = .87, 95% CI [.84, .90] for N = 386 (section 7.2).
    lower, upper = feldt_interval(0.87, 386, 10)
    assert round(lower, 2) in (0.84, 0.85)
    assert round(upper, 2) in (0.89, 0.90)


def one_factor_correlations(seed: int, n: int = 500) -> np.ndarray:
    rng = np.random.default_rng(seed)
    loadings = rng.uniform(0.3, 0.9, size=10)
    factor = rng.normal(size=(n, 1))
    items = factor * loadings + rng.normal(size=(n, 10)) * np.sqrt(1 - loadings**2)
    return np.corrcoef(items, rowvar=False)


@pytest.mark.parametrize("seed", range(4))
def test_one_factor_fit_is_the_minres_solution(seed):
    correlations = one_factor_correlations(seed)
    upper = np.triu_indices(10, 1)

    def residuals(loadings):
        return (np.outer(loadings, loadings) - correlations)[upper]

    oracle = optimize.least_squares(
        residuals, np.full(10, 0.5), xtol=1e-15, ftol=1e-15, gtol=1e-15
    ).x
    loadings, converged = estimators.one_factor_loadings(correlations)
    assert converged
    assert np.abs(loadings - oracle).max() < 1e-6

    omega, caveats = estimators.omega_total(correlations)
    expected = oracle.sum() ** 2 / (oracle.sum() ** 2 + (1 - oracle**2).sum())
    assert omega == pytest.approx(expected, abs=1e-6)
    assert caveats == []


def test_one_factor_fit_points_the_factor_the_way_the_items_point():
    loadings, _ = estimators.one_factor_loadings(one_factor_correlations(9))
    assert (loadings > 0).all()


def test_a_heywood_case_is_reported():
    # One item almost duplicates another: its loading hits the bound of 1.
    rng = np.random.default_rng(3)
    items = rng.normal(size=(400, 10))
    items[:, 1] = items[:, 0] + rng.normal(size=400) * 0.01
    omega, caveats = estimators.omega_total(np.corrcoef(items, rowvar=False))
    assert 0 <= omega <= 1
    assert any("Heywood" in caveat for caveat in caveats)


def hard_correlations(kind: str, seed: int) -> np.ndarray:
    """Correlation matrices that test the fit: tiny samples, bounds, singular matrices."""
    rng = np.random.default_rng(seed)
    n = (3, 4, 5, 8, 20, 60, 500)[seed % 7]
    items = rng.integers(-2, 3, size=(max(n, 6), 10)).astype(float)
    if kind == "near duplicate":  # a Heywood case
        items = rng.normal(size=(max(n, 12), 10))
        items[:, 1] = items[:, 0] + rng.normal(size=len(items)) * 0.01
    elif kind == "pair at -1":
        items[:, 5] = -items[:, 4]
    elif kind == "item is a sum":
        items[:, 3] = items[:, :3].sum(axis=1)
    items[0], items[1] = 2.0, -2.0  # no item without variance
    return np.corrcoef(items, rowvar=False)


@pytest.mark.parametrize("seed", range(14))
@pytest.mark.parametrize("kind", ["answers", "near duplicate", "pair at -1", "item is a sum"])
def test_one_factor_fit_agrees_with_the_handwritten_version(kind, seed):
    correlations = hard_correlations(kind, seed)
    expected, expected_converged = handwritten.one_factor_loadings(correlations)
    assert expected_converged
    loadings, converged = estimators.one_factor_loadings(correlations)
    assert converged
    assert np.abs(loadings - expected).max() < 1e-6
    omega, caveats = estimators.omega_total(correlations)
    common = expected.sum() ** 2
    assert omega == pytest.approx(common / (common + (1 - expected**2).sum()), abs=1e-6)
    heywood = (np.abs(expected) > 1 - 1e-6).any()
    assert any("Heywood" in caveat for caveat in caveats) == heywood
