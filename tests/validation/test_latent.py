"""The simulated validation study gives back the parameters put into it
(docs/design/validation-analysis.md §14.9). Each expected figure is computed here from the model's
definition (the second-order correlations, the normal distribution of the
standard library, Brooke's scoring rule), not by the module's own helpers,
which are themselves checked against the draws."""

from statistics import NormalDist

import numpy as np
import pytest

from scoring.instruments.companions import COMPANION_SCALES
from scoring.instruments.shs import DIMENSION_KEYS, ITEM_KEYS, ITEMS
from tests.validation.exact import second_order_correlations
from validation.simulation import parameters as model
from validation.simulation.latent import LatentStudy, simulate_latent, to_validation_data

PARTICIPANTS = 10_000  # 20,000 evaluations
# Many systems, so that the realised system effects average out like the model's.
SYSTEMS = [f"system {number}" for number in range(200)]
TOLERANCE = 0.03  # about four standard errors of a correlation at this n
PARAMS = model.DEFAULT
NEGATIVE = np.array([item.polarity < 0 for item in ITEMS])
DIMENSION = np.array([DIMENSION_KEYS.index(item.dimension) for item in ITEMS])


@pytest.fixture(scope="module")
def sample():
    return simulate_latent(PARTICIPANTS, seed=7, systems=SYSTEMS, retest_share=0.5)


def keyed_codes(sample):
    return np.where(NEGATIVE, 6 - sample.answers, sample.answers)


def test_latent_levels_correlate_as_the_second_order_model_says(sample):
    observed = np.corrcoef(sample.latent.T)
    assert np.abs(observed - second_order_correlations(PARAMS)).max() < TOLERANCE
    assert np.allclose(model.latent_correlations(PARAMS), second_order_correlations(PARAMS))


def test_continuous_responses_correlate_as_loadings_times_factor_correlations(sample):
    loadings = np.array(PARAMS.item_loadings)
    factor_r = second_order_correlations(PARAMS)[DIMENSION][:, DIMENSION]
    expected = np.outer(loadings, loadings) * factor_r
    np.fill_diagonal(expected, 1.0)
    assert np.abs(np.corrcoef(sample.shs_continuous.T) - expected).max() < TOLERANCE
    # Each item against its own factor: the standardised loading itself.
    for item in range(len(ITEM_KEYS)):
        observed = np.corrcoef(sample.shs_continuous[:, item], sample.latent[:, DIMENSION[item]])
        assert observed[0, 1] == pytest.approx(loadings[item], abs=TOLERANCE)


def test_codes_are_the_thresholds_cut_and_negative_items_are_mirrored(sample):
    assert set(np.unique(sample.answers)) == {1, 2, 3, 4, 5}
    normal = NormalDist()
    for item, thresholds in enumerate(PARAMS.item_thresholds):
        keyed = 1 + sum(sample.shs_continuous[:, item] > t for t in thresholds)
        given = 6 - keyed if NEGATIVE[item] else keyed
        assert np.array_equal(sample.answers[:, item], given)
        edges = [0.0, *(normal.cdf(t) for t in thresholds), 1.0]
        expected = np.diff(edges)
        observed = np.bincount(keyed, minlength=6)[1:] / sample.n
        assert np.abs(observed - expected).max() < 0.015
        # Agreeing with a negatively worded item goes with low perceived reliability.
        r = np.corrcoef(sample.answers[:, item], sample.latent[:, DIMENSION[item]])[0, 1]
        assert (r < 0) == NEGATIVE[item]


def test_codes_correlate_with_their_factor_at_the_attenuated_loading(sample):
    """The polyserial relation the CFA's expected loadings rest on: a code
    correlates with its factor at loading * sum(phi(t)) / sd(code)."""
    keyed = keyed_codes(sample)
    expected = model.attenuated_loadings(PARAMS)
    normal = NormalDist()
    for item, thresholds in enumerate(PARAMS.item_thresholds):
        observed = np.corrcoef(keyed[:, item], sample.latent[:, DIMENSION[item]])[0, 1]
        assert observed == pytest.approx(expected[item], abs=0.02)
        ratio = sum(normal.pdf(t) for t in thresholds) / keyed[:, item].std()
        assert expected[item] == pytest.approx(PARAMS.item_loadings[item] * ratio, abs=0.01)


def test_a_participants_two_evaluations_correlate_at_the_participant_icc(sample):
    first, second = sample.latent[0::2], sample.latent[1::2]
    assert np.all(sample.system[0::2] != sample.system[1::2])
    for factor in range(len(model.LATENT_KEYS)):
        r = np.corrcoef(first[:, factor], second[:, factor])[0, 1]
        assert r == pytest.approx(PARAMS.participant_icc, abs=TOLERANCE)
    total = sample.shs_continuous.sum(axis=1)
    r = np.corrcoef(total[0::2], total[1::2])[0, 1]
    assert r == pytest.approx(model.continuous_total_participant_icc(PARAMS), abs=TOLERANCE)


def test_the_retest_correlates_with_the_first_evaluation_as_put_in(sample):
    assert len(sample.retest_rows) == 2 * round(0.5 * PARTICIPANTS)
    shared = PARAMS.participant_icc + PARAMS.system_share
    latent_r = shared + (1 - shared) * PARAMS.occasion_stability
    assert model.retest_latent_r(PARAMS) == pytest.approx(latent_r)
    first = sample.latent[sample.retest_rows]
    for factor in range(len(model.LATENT_KEYS)):
        r = np.corrcoef(first[:, factor], sample.retest_latent[:, factor])[0, 1]
        assert r == pytest.approx(latent_r, abs=TOLERANCE)
    # An item's continuous response: its error is drawn afresh, so loading^2 * r.
    for item, loading in enumerate(PARAMS.item_loadings):
        pair = sample.shs_continuous[sample.retest_rows, item], sample.retest_continuous[:, item]
        assert np.corrcoef(*pair)[0, 1] == pytest.approx(loading**2 * latent_r, abs=TOLERANCE)
    total = sample.shs_continuous[sample.retest_rows].sum(1), sample.retest_continuous.sum(1)
    expected = model.continuous_total_retest_r(PARAMS)
    assert np.corrcoef(*total)[0, 1] == pytest.approx(expected, abs=TOLERANCE)
    assert np.all(sample.retest_days >= 14)
    assert set(np.unique(sample.retest_answers)) == {1, 2, 3, 4, 5}


def test_companion_scales_have_their_codes_keying_and_convergent_correlation(sample):
    shs_total = sample.shs_continuous.sum(axis=1)
    for key, shape in PARAMS.companions.items():
        items, continuous = sample.companion_items[key], sample.companion_continuous[key]
        assert set(np.unique(items)) == set(shape.codes)
        factor = sample.latent[:, model.LATENT_KEYS.index(shape.factor)]
        for column, reversed_item in enumerate(shape.reversed):
            r = np.corrcoef(items[:, column], factor)[0, 1]
            assert (r < 0) == reversed_item, (key, column)
            loading = np.corrcoef(continuous[:, column], factor)[0, 1]
            assert loading == pytest.approx(shape.loading, abs=TOLERANCE)
        r = np.corrcoef(shs_total, continuous.sum(axis=1))[0, 1]
        assert r == pytest.approx(model.continuous_total_companion_r(PARAMS, key), abs=TOLERANCE)


def test_every_registered_companion_scale_is_driven_by_a_factor_of_the_model():
    assert set(model.COMPANION_SHAPES) == set(COMPANION_SCALES)
    assert {shape.factor for shape in model.COMPANION_SHAPES.values()} <= set(model.LATENT_KEYS)


def test_languages_are_spread_evenly_and_kept_by_a_participant(sample):
    counts = {code: int(np.sum(sample.language == code)) for code in ("en", "de", "fr")}
    assert max(counts.values()) - min(counts.values()) <= 2
    assert np.array_equal(sample.language[0::2], sample.language[1::2])


def test_a_non_invariant_scenario_shifts_one_items_codes_in_one_language():
    sample = simulate_latent(
        PARTICIPANTS, seed=3, systems=SYSTEMS, scales=(), params=model.NON_INVARIANT
    )
    item = ITEM_KEYS.index("q8")
    keyed = keyed_codes(sample)[:, item]
    normal = NormalDist()
    thresholds = model.NON_INVARIANT.item_thresholds[item]

    def expected_mean(shift):
        return 1 + sum(1 - normal.cdf(t + shift) for t in thresholds)

    for language, shift in (("en", 0.0), ("fr", 0.6)):
        observed = keyed[sample.language == language].mean()
        assert observed == pytest.approx(expected_mean(shift), abs=0.04)
    # The latent levels are the same in every language: only the answers moved.
    means = [sample.latent[sample.language == code, 3].mean() for code in ("en", "fr")]
    assert abs(means[0] - means[1]) < 0.05


def test_one_participant_sampled_alone_gets_the_answers_of_the_whole_sample():
    """What simulate_study does: each session's systems are known only once the
    platform has allocated them, so each participant is sampled on their own."""
    study = LatentStudy(50, seed=11, retest_share=0.4)
    systems = study.assign_systems(["A", "B", "C"])
    whole = study.sample(systems)
    for participant in (0, 17, 49):
        alone = study.sample(systems[participant], participants=[participant])
        rows = whole.participant == participant
        assert np.array_equal(alone.answers, whole.answers[rows])
        for key in study.scales:
            assert np.array_equal(alone.companion_items[key], whole.companion_items[key][rows])
        assert alone.language[0] == whole.language[rows][0]
        retested = np.isin(whole.retest_rows, np.flatnonzero(rows))
        assert np.array_equal(alone.retest_answers, whole.retest_answers[retested])
    again = LatentStudy(50, seed=11, retest_share=0.4).sample(systems)
    assert np.array_equal(again.answers, whole.answers)


def test_validation_data_holds_the_sample_with_published_scores():
    sample = simulate_latent(40, seed=5, retest_share=0.5, groups=("a", "b"), group_name="age_band")
    data = to_validation_data(sample)
    assert data.n == 80 and np.array_equal(data.answers, sample.answers - 3)  # as stored
    assert len(set(data.participant)) == 40 and data.group_name == "age_band"
    assert set(data.group) == {"a", "b"} and set(data.language) == {"en", "de", "fr"}
    assert data.retest.n == 40
    assert np.array_equal(data.retest.first, data.answers[sample.retest_rows])
    assert np.array_equal(data.retest.second, sample.retest_answers - 3)
    assert np.array_equal(data.retest.participant, data.participant[sample.retest_rows])
    # Brooke's rule, by hand: odd items (code - 1), even items (5 - code), times 2.5.
    items = data.companion_items["sus"]
    by_hand = [2.5 * sum(c - 1 if n % 2 else 5 - c for n, c in enumerate(r, 1)) for r in items]
    assert np.allclose(data.companion_scores["sus"], by_hand)
    assert set(data.companion_scores) == {"sus", "scs", "trust"}
    assert data.companion_items["trust"].shape == (80, 12)


def test_impossible_parameters_and_unknown_scales_are_refused():
    with pytest.raises(ValueError, match="sum below 1"):
        model.LatentParameters(participant_icc=0.8, system_share=0.3)
    with pytest.raises(ValueError, match="unknown: \\['nps'\\]"):
        LatentStudy(10, seed=0, scales=("nps",))
