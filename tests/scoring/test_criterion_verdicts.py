"""The verdict rules of the criterion-validity study (docs/design/criterion-verdicts.md §13.6)
and the H3 test that can fail, against independent computations: statsmodels'
OLS for every residual and slope, scipy for the correlations, statsmodels'
power solver for the planning figure, and data simulated with a known effect.
"""

import math
from statistics import fmean

import numpy as np
import pytest
from scipy import stats
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.power import NormalIndPower

from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.validity.criterion import CriterionRow, criterion_analysis
from scoring.stats.validity.permutation import (
    evaluation_orders,
    participant_orders,
    residual_correlations,
)
from scoring.stats.validity.plan import Plan
from scoring.stats.validity.verdicts import (
    evaluations_needed,
    falsification_verdict,
    from_z,
)

FAST = Plan(resamples=400)
OTHERS = [key for key in DIMENSION_KEYS if key != "DP"]


def presentation_study(n_participants=150, seed=1, dp_special=True, fp_noise=False):
    """Two evaluations per participant. Users' overall impression G drives every
    dimension; factual precision follows G's factual part. With `dp_special`, a
    presentation effect P raises the four other dimensions and DP measures P
    alone (the paper's H3); without it DP is one more indicator of G. With
    `fp_noise`, factual precision is pure noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_participants):
        person = rng.normal(scale=0.5)
        for _ in range(2):
            facts = rng.normal()
            shown = rng.normal()
            general = facts + person
            dims = {}
            for key in OTHERS:
                lift = 0.8 * shown if dp_special else 0.0
                dims[key] = float(general + lift + rng.normal(scale=0.7))
            dims["DP"] = float((1.2 * shown if dp_special else general) + rng.normal(scale=0.7))
            precision = rng.normal() if fp_noise else 0.8 * facts + 0.6 * rng.normal()
            rows.append(
                CriterionRow(
                    participant=f"P{p:03d}",
                    shs=float(np.mean(list(dims.values()))),
                    dimensions=dims,
                    factual_precision=float(precision),
                    citation_support=None,
                    presentation=float(1 / (1 + math.exp(-shown)) + rng.normal(scale=0.05)),
                )
            )
    return rows


def arrays(rows):
    fp = np.array([r.factual_precision for r in rows])
    dp = np.array([r.dimensions["DP"] for r in rows])
    outcome = np.array([np.mean([r.dimensions[k] for k in OTHERS]) for r in rows])
    return fp, dp, outcome, [r.participant for r in rows]


def residual_dp_correlation(outcome, fp, dp):
    """The statistic written out with statsmodels: OLS residual, then Pearson r."""
    residual = OLS(outcome, np.column_stack([np.ones_like(fp), fp])).fit().resid
    return stats.pearsonr(residual, dp).statistic


# -- H3 with DP: a test that can fail -------------------------------------------


def test_h3_with_dp_fails_where_dp_plays_no_special_role():
    rows = presentation_study(dp_special=False)
    h3 = criterion_analysis(rows, FAST).as_dict()["h3"]
    fp, dp, outcome, _ = arrays(rows)
    observed = residual_dp_correlation(outcome, fp, dp)
    for analysis in ("unclustered", "clustered"):
        got = h3[analysis]
        assert got["beta_std"] == pytest.approx(observed, abs=1e-10)
        # DP still predicts the residual strongly: the slope's own t test "passes",
        # which is why it is not interpretable as a test of H3.
        assert got["beta_std"] > 0.3 and got["p"] < 1e-6
        assert got["slope_test"] == "not_interpretable"
        assert got["beta_std"] < got["null"]["mean"]
        assert got["verdict"] == "not_supported"
    assert h3["verdict"] == "not_supported" and h3["outcome"] == "mean of FA, SR, LC, RG"


def test_h3_with_dp_passes_where_dp_carries_the_presentation_effect():
    rows = presentation_study(dp_special=True)
    h3 = criterion_analysis(rows, FAST).as_dict()["h3"]
    for analysis in ("unclustered", "clustered"):
        got = h3[analysis]
        assert got["beta_std"] > got["null"]["high"]
        assert got["p_permutation"] < 0.01
        assert got["verdict"] == "supported"
    assert h3["verdict"] == "supported"


def test_h3_with_dp_keeps_its_error_rate_when_factual_precision_is_noise():
    # The old form (SHS with DP in it, regressed on DP) called this "supported"
    # every time. With noise for factual precision the permutation p is uniform:
    # about alpha of the studies may come out supported, never most of them.
    plan = Plan(resamples=200, primary="unclustered")
    verdicts = [
        criterion_analysis(
            presentation_study(n_participants=40, seed=seed, dp_special=False, fp_noise=True), plan
        ).as_dict()["h3"]["verdict"]
        for seed in range(60)
    ]
    assert verdicts.count("supported") <= 9  # 5% of 60 is 3; 9 is p < .002 under H0
    assert verdicts.count("inconclusive") >= 40


def test_the_permutation_statistic_matches_statsmodels_for_every_order():
    rows = presentation_study(n_participants=30)
    fp, dp, outcome, participants = arrays(rows)
    for orders in (
        next(evaluation_orders(len(fp), 20, seed=3)),
        next(participant_orders(np.array(participants), 20, seed=3)),
    ):
        got = residual_correlations(outcome, fp[orders], dp)
        expected = [residual_dp_correlation(outcome, fp[order], dp) for order in orders]
        assert got == pytest.approx(expected, abs=1e-10)


def test_participant_permutations_move_whole_blocks_between_equal_participants():
    participants = np.array(["a", "a", "b", "b", "c", "c", "d", "e", "f"])
    for order in next(participant_orders(participants, 50, seed=1)):
        assert sorted(order) == list(range(len(participants)))  # a permutation
        for rows in ([0, 1], [2, 3], [4, 5]):
            taken = participants[order[rows]]
            assert len(set(taken)) == 1 and taken[0] in "abc"
            assert list(order[rows]) == sorted(order[rows])  # block order kept
        assert set(participants[order[6:]]) == {"d", "e", "f"}


# -- H3 with the annotated presentation measure ---------------------------------


def test_h3_with_presentation_matches_statsmodels_and_is_supported_with_an_effect():
    rows = presentation_study(dp_special=True)
    plan = Plan(resamples=300, h3_predictor="presentation")
    h3 = criterion_analysis(rows, plan).as_dict()["h3"]
    shs = np.array([r.shs for r in rows])
    fp, _, _, participants = arrays(rows)
    shown = np.array([r.presentation for r in rows])
    residual = OLS(shs, np.column_stack([np.ones_like(fp), fp])).fit().resid
    second = np.column_stack([np.ones_like(shown), shown])
    classical = OLS(residual, second).fit()
    codes = np.unique(participants, return_inverse=True)[1]
    robust = OLS(residual, second).fit(cov_type="cluster", cov_kwds={"groups": codes}, use_t=True)
    assert h3["predictor"] == "presentation" and h3["outcome"] == "SHS"
    assert h3["unclustered"]["slope"] == pytest.approx(classical.params[1], rel=1e-10)
    assert h3["unclustered"]["p"] == pytest.approx(classical.pvalues[1] / 2, rel=1e-8)
    assert h3["clustered"]["se"] == pytest.approx(robust.bse[1], rel=1e-10)
    assert h3["unclustered"]["beta_std"] == pytest.approx(
        stats.pearsonr(residual, shown).statistic, abs=1e-10
    )
    assert h3["verdict"] == "supported"


def test_h3_with_presentation_is_not_supported_without_an_effect():
    rows = presentation_study(dp_special=False)
    plan = Plan(resamples=300, h3_predictor="presentation")
    h3 = criterion_analysis(rows, plan).as_dict()["h3"]
    assert h3["verdict"] in ("inconclusive", "not_supported")
    assert abs(h3["unclustered"]["beta_std"]) < 0.15


def test_h3_with_presentation_is_not_computable_without_its_annotations():
    rows = [
        CriterionRow(r.participant, r.shs, r.dimensions, r.factual_precision, None)
        for r in presentation_study(n_participants=20)
    ]
    result = criterion_analysis(rows, Plan(resamples=200, h3_predictor="presentation")).as_dict()
    assert result["h3"]["verdict"] == "not_computable" and result["h3"]["n"] == 0
    assert any(w["figure"] == "h3.beta" for w in result["warnings"])


# -- the falsification rule ------------------------------------------------------


@pytest.mark.parametrize(
    ("r", "low", "high", "verdict", "leaning"),
    [
        (0.10, -0.07, 0.29, "inconclusive", "below"),  # the interval spans .20
        (0.25, 0.12, 0.37, "inconclusive", "above"),
        (0.05, -0.10, 0.19, "falsified", None),
        (0.35, 0.20, 0.48, "not_falsified", None),  # "at or above" includes .20
        (0.10, None, None, "inconclusive", "below"),  # no interval, nothing decided
        (None, None, None, "not_computable", None),
    ],
)
def test_the_falsification_rule(r, low, high, verdict, leaning):
    assert falsification_verdict(r, low, high, 0.20) == {"verdict": verdict, "leaning": leaning}


def test_an_inconclusive_falsification_says_how_many_evaluations_would_decide():
    rows = [
        CriterionRow(r.participant, r.shs, r.dimensions, r.factual_precision, None)
        for r in presentation_study(n_participants=25, seed=4)
    ]
    plan = Plan(resamples=300, primary="unclustered", falsification_threshold=0.6)
    falsification = criterion_analysis(rows, plan).as_dict()["falsification"]
    assert falsification["verdict"] == "inconclusive" and falsification["decided"] is False
    r = falsification["r"]
    distance = abs(math.atanh(r) - math.atanh(0.6))
    solved = NormalIndPower().solve_power(
        effect_size=distance, alpha=0.05, power=0.8, ratio=0, alternative="two-sided"
    )
    assert falsification["evaluations_needed"] == pytest.approx(3 + solved, abs=1.5)
    assert falsification["evaluations_needed"] > falsification["n"]


def test_the_level_of_the_interval_follows_alpha():
    rows = presentation_study(n_participants=40)
    falsification = criterion_analysis(rows, Plan(resamples=200, alpha=0.01)).as_dict()[
        "falsification"
    ]
    assert falsification["level"] == pytest.approx(0.99)


def test_a_constant_factual_precision_made_of_annotator_means_is_not_computable():
    # Three annotators gave 0.7 each, written three ways: their means differ in the
    # last bit, and a correlation with that rounding noise is no figure at all.
    means = [fmean([0.7, 0.7, 0.7]), fmean([0.1 * 7, 0.7, 0.35 * 2]), fmean([0.7, 0.07 * 10])]
    assert np.ptp(means) > 0  # the trap: not exactly constant
    rows = [
        CriterionRow(r.participant, r.shs, r.dimensions, means[i % 3], None)
        for i, r in enumerate(presentation_study(n_participants=30))
    ]
    result = criterion_analysis(rows, FAST).as_dict()
    assert result["h1"]["unclustered"]["r"] is None
    falsification = result["falsification"]
    assert falsification["verdict"] == "not_computable"
    assert "factual precision does not vary" in falsification["reason"]["reason"]
    assert result["h3"]["verdict"] == "not_computable"


# -- hypothesis verdicts and agreement --------------------------------------------


@pytest.mark.parametrize(
    ("z", "sidedness", "verdict"),
    [
        (1.70, "one_sided", "supported"),
        (-1.70, "one_sided", "not_supported"),
        (1.50, "one_sided", "inconclusive"),
        (1.70, "two_sided", "inconclusive"),  # two-sided needs |z| > 1.96
        (2.00, "two_sided", "supported"),
        (-2.00, "two_sided", "not_supported"),
        (None, "one_sided", "not_computable"),
    ],
)
def test_hypothesis_verdicts_from_a_z_statistic(z, sidedness, verdict):
    assert from_z(z, 0.05, sidedness) == verdict


def test_every_verdict_carries_the_agreement_of_its_criterion():
    rows = presentation_study(n_participants=30)
    poor = criterion_analysis(rows, FAST, {"factual_precision": 0.05}).as_dict()
    for key in ("h1", "h3", "falsification"):
        check = poor[key]["criterion_agreement"]
        assert check == [
            {"measure": "factual_precision", "icc": 0.05, "minimum": 0.5, "adequate": False}
        ]
        assert poor[key]["criterion_adequate"] is False
    assert poor["h2"]["criterion_agreement"][0]["adequate"] is None  # never annotated
    good = criterion_analysis(rows, FAST, {"factual_precision": 0.8}).as_dict()
    assert good["falsification"]["criterion_adequate"] is True
    unknown = criterion_analysis(rows, FAST, {"factual_precision": None}).as_dict()
    assert unknown["h1"]["criterion_adequate"] is None


def test_evaluations_needed_is_none_at_the_threshold():
    assert evaluations_needed(0.2, 0.2, 0.05) is None
    assert evaluations_needed(None, 0.2, 0.05) is None
