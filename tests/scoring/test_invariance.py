"""Measurement invariance (docs/design/validation-analysis.md §14.6) against lavaan's published
multi-group example (Holzinger & Swineford by school), against separate
semopy fits, and on simulated groups with and without intercept differences."""

import numpy as np
import pytest

from scoring.stats.factors.fit import fit_measurement_model
from scoring.stats.factors.invariance import fit_invariance, invariance
from tests.scoring.sem_examples import HS_LAYOUT, holzinger_swineford, simulated_shs


@pytest.fixture(scope="module")
def by_school():
    data, school = holzinger_swineford()
    return fit_invariance(data, school, HS_LAYOUT, grouping="school", min_group=100)


def test_holzinger_swineford_by_school_matches_lavaan(by_school):
    # lavaan tutorial, "Measurement invariance": group = "school",
    # group.equal = c() / "loadings" / c("loadings", "intercepts")
    models = by_school["models"]
    expected = {"configural": (115.851, 48), "metric": (124.044, 54), "scalar": (164.103, 60)}
    for step, (chi2, df) in expected.items():
        assert models[step]["problem"] is None
        assert models[step]["chi2"] == pytest.approx(chi2, abs=0.005)  # lavaan prints 3 decimals
        assert models[step]["df"] == df
    assert [g["n"] for g in by_school["groups"]] == [156, 145]
    metric = by_school["differences"]["metric"]
    assert metric["delta_chi2"] == pytest.approx(124.044 - 115.851, abs=0.01)
    assert metric["delta_df"] == 6 and metric["p"] == pytest.approx(0.224, abs=0.002)


def test_configural_model_is_the_separate_semopy_fits_added_up(by_school):
    data, school = holzinger_swineford()
    separate = [
        fit_measurement_model(data[school == s], HS_LAYOUT)["chi2"]
        for s in ("Pasteur", "Grant-White")
    ]
    assert by_school["models"]["configural"]["chi2"] == pytest.approx(sum(separate), abs=1e-3)


def test_verdicts_follow_the_cfi_rule(by_school):
    metric, scalar = by_school["differences"]["metric"], by_school["differences"]["scalar"]
    models = by_school["models"]
    assert metric["delta_cfi"] == pytest.approx(
        models["metric"]["cfi"] - models["configural"]["cfi"]
    )
    assert metric["holds"] is (metric["delta_cfi"] >= -0.01)
    assert scalar["holds"] is False and "does not hold" in scalar["verdict"]
    assert "Cheung & Rensvold" in scalar["verdict"]


def three_languages(shift_fr=None, n=1500):
    answers = np.vstack(
        [
            simulated_shs(n, seed=1),
            simulated_shs(n, seed=2),
            simulated_shs(n, seed=3, shift=shift_fr),
        ]
    )
    return answers, np.repeat(["en", "de", "fr"], n)


def test_invariant_groups_pass_metric_and_scalar():
    answers, language = three_languages()
    result = invariance(answers, language, grouping="language")
    assert result["problem"] is None and result["n"] == 4500
    assert result["differences"]["metric"]["holds"] is True
    assert result["differences"]["scalar"]["holds"] is True
    assert result["models"]["configural"]["df"] == 3 * 25


def test_shifted_intercepts_fail_scalar_but_not_metric():
    # French answers to q2 and q7 shifted by 0.4 of a standard deviation, nothing else changed
    shift = np.zeros(10)
    shift[[1, 6]] = 0.4
    answers, language = three_languages(shift_fr=shift)
    result = invariance(answers, language, grouping="language")
    assert result["differences"]["metric"]["holds"] is True
    scalar = result["differences"]["scalar"]
    assert scalar["holds"] is False and scalar["delta_cfi"] < -0.01


def test_improper_scalar_model_gives_a_problem_and_no_figures():
    # Shifting two markers by 0.8 SD: the best equal-intercept solution drives
    # q1's residual variance to zero, a Heywood case.
    shift = np.zeros(10)
    shift[[0, 5]] = 0.8
    answers, language = three_languages(shift_fr=shift)
    result = invariance(answers, language, grouping="language")
    scalar = result["models"]["scalar"]
    assert "Heywood" in scalar["problem"] and "chi2" not in scalar and "cfi" not in scalar
    # The group is named (fr, whose intercepts were shifted, or another one), in
    # English and as a template with its parameters for a report to translate.
    group = scalar["params"]["problem"]["params"]["group"]
    assert group in {"en", "de", "fr"} and f"group {group}" in scalar["problem"]
    assert result["differences"]["scalar"] == {
        "problem": "No scalar comparison: a model in it has no usable fit.",
        "message": "No {step} comparison: a model in it has no usable fit.",
        "params": {"step": "scalar"},
        "holds": None,
    }


def test_small_groups_are_named_not_dropped_silently():
    answers, language = three_languages(n=300)
    answers = np.vstack([answers, simulated_shs(12, seed=9)])
    language = np.concatenate([language, ["it"] * 12])
    result = invariance(answers, language, grouping="language", min_group=200)
    assert result["too_small"] == ["it (n=12)"]
    assert "too small to fit: it (n = 12)" in result["warnings"]
    assert result["too_small_groups"] == [{"label": "it", "n": 12}]
    assert [g["label"] for g in result["groups"]] == ["de", "en", "fr"]


def test_fewer_than_two_groups_fit_nothing():
    answers = simulated_shs(400, seed=8)
    result = invariance(answers, np.array(["en"] * 390 + ["de"] * 10), grouping="language")
    assert "at least two groups" in result["problem"]
    assert result["models"] == {} and result["too_small"] == ["de (n=10)"]
    with pytest.raises(ValueError, match="group labels"):
        invariance(answers, np.array(["en"] * 3), grouping="language")
