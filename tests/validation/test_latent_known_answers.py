"""The retest, convergent-validity and invariance analyses (docs/design/validation-analysis.md
§14.3, §14.4, §14.6) find in a simulated study (§14.9) what its parameters
imply on the answers: figures computed exactly in tests/validation/exact.py
from bivariate normal probabilities, not estimated from draws, and
invariance where the model has it."""

import numpy as np
import pytest

from scoring.stats.factors.invariance import invariance
from scoring.stats.nested.clustered import keyed_items
from scoring.stats.nested.icc import participant_share
from scoring.stats.retest.stability import retest_report
from scoring.stats.validity.convergent import convergent_validity
from tests.validation.exact import shs_code_covariance, shs_companion_correlation
from validation.simulation import parameters as model
from validation.simulation.latent import simulate_latent, to_validation_data

PARAMS = model.DEFAULT
SYSTEMS = [f"system {number}" for number in range(20)]


@pytest.fixture(scope="module")
def data():
    sample = simulate_latent(1000, seed=4, systems=SYSTEMS, retest_share=1.0)
    return to_validation_data(sample)


def test_the_exact_figures_agree_with_the_continuous_ones_they_attenuate():
    # Cutting into codes loses a little: the coded figures lie just below the
    # continuous responses' ones, which parameters.py gives in closed form.
    retest = shs_code_covariance(PARAMS, model.retest_latent_r(PARAMS)).sum()
    icc = retest / shs_code_covariance(PARAMS).sum()
    assert 0.85 * model.continuous_total_retest_r(PARAMS) < icc
    assert icc < model.continuous_total_retest_r(PARAMS)
    for key in PARAMS.companions:
        coded = shs_companion_correlation(PARAMS, key)
        assert 0.85 * model.continuous_total_companion_r(PARAMS, key) < coded
        assert coded < model.continuous_total_companion_r(PARAMS, key)


def test_the_retest_icc_of_the_shs_has_the_simulated_value_in_its_interval(data):
    report = retest_report(data.retest)

    assert report["n"] == 2000 and report["participants"] == 1000
    assert report["mean_days"] == pytest.approx(14 + 1.5, abs=0.2)  # due day + late, mean 1.5
    retest = shs_code_covariance(PARAMS, model.retest_latent_r(PARAMS)).sum()
    expected = retest / shs_code_covariance(PARAMS).sum()
    # No occasion effect is simulated: agreement and consistency estimate the same value.
    for figure in ("icc2_1", "icc3_1"):
        low, high = report["scores"]["shs"][figure]["ci"]
        assert low <= expected <= high, (figure, report["scores"]["shs"][figure])


def test_convergent_validity_has_the_simulated_correlations_in_its_intervals(data):
    report = convergent_validity(data)

    assert report["companions"] == ["sus", "scs", "trust"] and report["n"] == 2000
    found = {}
    for key in report["companions"]:
        pair = report["pairs"]["shs"][key]
        expected = shs_companion_correlation(PARAMS, key)
        assert pair["ci"][0] <= expected <= pair["ci"][1], (key, pair["r"], expected)
        found[key] = pair["r"]
    # The order put in: trust above explanation above usability.
    assert found["trust"] > found["scs"] > found["sus"]
    assert np.isfinite(list(found.values())).all()


@pytest.mark.parametrize(
    ("params", "scalar_holds"), [(model.DEFAULT, True), (model.NON_INVARIANT, False)]
)
def test_invariance_across_languages_is_found_where_it_was_put_in(params, scalar_holds):
    """The default study answers alike in every language; NON_INVARIANT moves
    two items' thresholds in one language each, which leaves the loadings
    (metric invariance) and breaks the intercepts (scalar invariance)."""
    sample = simulate_latent(1500, seed=0, systems=SYSTEMS, scales=(), params=params)
    data = to_validation_data(sample)

    report = invariance(data.answers, data.language, grouping="language")

    assert report["problem"] is None and [g["n"] for g in report["groups"]] == [1000] * 3
    assert report["differences"]["metric"]["holds"] is True
    assert report["differences"]["scalar"]["holds"] is scalar_holds


def test_the_participant_share_of_the_shs_has_the_simulated_value_in_its_interval(data):
    """A participant's two evaluations (of two systems) share the participant's
    part of the latent levels only: their latent correlation is participant_icc."""
    expected = (
        shs_code_covariance(PARAMS, PARAMS.participant_icc).sum()
        / shs_code_covariance(PARAMS).sum()
    )
    shs = keyed_items(data.answers).sum(axis=1) / 20.0

    share = participant_share(shs, data.participant, data.system)

    low, high = share["anova"]["ci95"]
    assert low <= expected <= high, share["anova"]
