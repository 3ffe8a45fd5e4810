"""Data for the factor-analysis tests: the Holzinger & Swineford (1939) sample
that semopy ships (lavaan's HolzingerSwineford1939) and SHS answers simulated
from a known five-factor model."""

import numpy as np
from scipy import stats
from semopy.examples import holzinger39

from scoring.stats.factors.model import Layout

HS_LAYOUT = Layout.of(
    {
        f"x{i}": factor
        for i, factor in zip(
            range(1, 10), ["visual"] * 3 + ["textual"] * 3 + ["speed"] * 3, strict=True
        )
    }
)
CUTS = np.array([-1.5, -0.5, 0.5, 1.5])  # standard-normal thresholds of the answers -2..+2
LOADINGS = np.array([0.8, 0.7, 0.75, 0.65, 0.7, 0.8, 0.6, 0.7, 0.75, 0.7])
FACTOR_CORRELATION = 0.4


def holzinger_swineford():
    data = holzinger39.get_data()
    return data[list(HS_LAYOUT.items)].to_numpy(float), data["school"].to_numpy()


def simulated_shs(n, seed, shift=None):
    """(n, 10) answers as stored (-2..+2): standard-normal items on five
    correlated factors, cut at CUTS, negatively worded items negated. `shift` adds to the
    continuous items before cutting (an intercept difference)."""
    rng = np.random.default_rng(seed)
    phi = np.full((5, 5), FACTOR_CORRELATION)
    np.fill_diagonal(phi, 1.0)
    factors = rng.multivariate_normal(np.zeros(5), phi, size=n)
    noise = rng.normal(size=(n, 10)) * np.sqrt(1 - LOADINGS**2)
    continuous = factors[:, np.repeat(np.arange(5), 2)] * LOADINGS + noise
    if shift is not None:
        continuous = continuous + shift
    answers = np.digitize(continuous, CUTS) - 2
    answers[:, 1::2] = -answers[:, 1::2]
    return answers


def cut_loadings():
    """The standardised loadings of the cut items on their factors.

    E[F | X] = lambda X for standard-normal X, so corr(code, F) = lambda *
    corr(code, X); corr(code, X) = sum_k phi(tau_k) / sd(code), since
    cov(1{X > tau}, X) = phi(tau). Exact for the model, independent of any fit.
    """
    p = np.diff(np.concatenate([[0.0], stats.norm.cdf(CUTS), [1.0]]))
    codes = np.arange(-2, 3)
    sd = np.sqrt(p @ codes**2 - (p @ codes) ** 2)
    return LOADINGS * stats.norm.pdf(CUTS).sum() / sd
