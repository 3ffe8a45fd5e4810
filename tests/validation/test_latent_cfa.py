"""The CFA of docs/design/validation-analysis.md §14.5 recovers the loadings the simulated study
was given (§14.9).

The model's loadings are those of the continuous responses y*; the CFA fits
ML to the 1-5 codes cut from them, which correlate less with their factor
(a code cut at thresholds t correlates sum(phi(t)) / sd(code) with y*), so
on the codes its estimand is the attenuated loading. Rather than trust the
one-variable polyserial formula of `attenuated_loadings`, the test computes
the estimand exactly: the population covariance of the keyed codes from
bivariate normal probabilities (tests/validation/exact.py), and the ML fit
to that covariance. The CFA of the continuous responses must find
the model's own loadings.
"""

import numpy as np
import pytest

from scoring.instruments.shs import ITEM_KEYS
from scoring.stats.factors.cfa import cfa_report, shs_layout
from scoring.stats.factors.fit import fit_measurement_model
from tests.validation.exact import shs_code_covariance
from validation.simulation import parameters as model
from validation.simulation.latent import simulate_latent, to_validation_data

PARAMS = model.DEFAULT
SYSTEMS = [f"system {number}" for number in range(20)]


def data_with_covariance(covariance: np.ndarray, n: int = 5000) -> np.ndarray:
    """Rows whose sample covariance is exactly `covariance`: ML on them is ML on it."""
    z = np.random.default_rng(0).standard_normal((n, len(covariance)))
    z -= z.mean(axis=0)
    z = z @ np.linalg.inv(np.linalg.cholesky(np.cov(z.T, bias=True))).T
    return z @ np.linalg.cholesky(covariance).T


@pytest.fixture(scope="module")
def estimand() -> dict[str, float]:
    fit = fit_measurement_model(
        data_with_covariance(shs_code_covariance(PARAMS)), shs_layout("five")
    )
    return {entry["item"]: entry["estimate"] for entry in fit["loadings"]}


def test_the_polyserial_formula_is_close_to_the_exact_estimand(estimand):
    exact = np.array([estimand[key] for key in ITEM_KEYS])
    assert np.abs(model.attenuated_loadings(PARAMS) - exact).max() < 0.015


def test_the_cfa_of_a_simulated_study_recovers_its_loadings_within_their_cis(estimand):
    """The report's path end to end, on one study of 2,000 evaluations. Ten 95%
    intervals all cover their value in only about 60% of studies, so whether
    the intervals are right is the next test's question, over many studies."""
    sample = simulate_latent(1000, seed=1, systems=SYSTEMS, scales=())
    report = cfa_report(to_validation_data(sample).answers)

    five = report["five"]
    assert five["problem"] is None and report["n"] == 2000 and report["estimator"] == "ML"
    for entry in five["loadings"]:
        low, high = entry["ci95"]
        assert low <= estimand[entry["item"]] <= high, entry
        assert entry["estimate"] == pytest.approx(estimand[entry["item"]], abs=0.06)


def test_the_cfas_intervals_cover_the_simulated_loadings_at_their_rate(estimand):
    """Over 20 studies of 2,000 evaluations, the 200 loading intervals contain
    their value about 95% of the time, on the codes (the exact estimand) and on
    the continuous responses (the model's own loadings). The two evaluations of
    a participant make the ML intervals a little narrow: 0.85 leaves room for
    that, and intervals half as wide as they should be would cover about 67%."""
    on_codes, on_continuous = [], []
    layout = shs_layout("five")
    for seed in range(20):
        sample = simulate_latent(1000, seed=100 + seed, systems=SYSTEMS, scales=())
        five = cfa_report(to_validation_data(sample).answers)["five"]
        on_codes += [_covers(entry, estimand[entry["item"]]) for entry in five["loadings"]]
        continuous = fit_measurement_model(sample.shs_continuous, layout)["loadings"]
        on_continuous += [
            _covers(entry, PARAMS.item_loadings[ITEM_KEYS.index(entry["item"])])
            for entry in continuous
        ]
    assert np.mean(on_codes) >= 0.85
    assert np.mean(on_continuous) >= 0.85


def _covers(entry: dict, value: float) -> bool:
    return entry["ci95"][0] <= value <= entry["ci95"][1]
