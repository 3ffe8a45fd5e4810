"""Convergent and discriminant validity (scoring/stats/validity/convergent.py)
against hand computations."""

import math

import numpy as np
import pytest

from scoring.instruments.companions import COMPANION_SCALES
from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.reliability.analysis import analyze
from scoring.stats.validation_data import ValidationData
from scoring.stats.validity.convergent import convergent_validity, cronbach_alpha, verdict

SUS = COMPANION_SCALES["sus"]


def _study(n: int = 60, seed: int = 7, link: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """SHS answers and SUS item codes that share a latent judgement of the system."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    polarity = np.array([1, -1] * 5)
    shs = np.clip(np.rint(latent[:, None] * polarity + rng.normal(scale=1.0, size=(n, 10))), -2, 2)
    shared = link * latent + math.sqrt(1 - link**2) * rng.normal(size=n)
    direction = np.array([1, -1] * 5)  # SUS even items are worded negatively
    sus = np.clip(
        np.rint(3 + shared[:, None] * direction + rng.normal(scale=0.9, size=(n, 10))), 1, 5
    )
    return shs.astype(int), sus


def _data(answers: np.ndarray, sus_items: np.ndarray, sus_scores=None) -> ValidationData:
    n = len(answers)
    return ValidationData(
        answers=answers,
        participant=np.arange(n),
        system=np.array(["A"] * n),
        language=np.array(["en"] * n),
        companion_items={"sus": sus_items},
        companion_scores={"sus": SUS.score_array(sus_items) if sus_scores is None else sus_scores},
    )


def _alpha_by_covariance(items: np.ndarray) -> float:
    covariance = np.cov(items, rowvar=False)
    k = covariance.shape[0]
    return k / (k - 1) * (1 - np.trace(covariance) / covariance.sum())


def test_disattenuated_r_and_interval_against_a_hand_computation():
    answers, sus_items = _study()
    result = convergent_validity(_data(answers, sus_items))
    pair = result["pairs"]["shs"]["sus"]
    n = len(answers)
    shs = (answers[:, 0::2] - answers[:, 1::2]).sum(axis=1) / 20
    # Brooke's scoring written out: odd items code - 1, even items 5 - code, times 2.5.
    sus_scores = 2.5 * ((sus_items[:, 0::2] - 1).sum(axis=1) + (5 - sus_items[:, 1::2]).sum(axis=1))
    r = np.corrcoef(shs, sus_scores)[0, 1]
    alpha_shs = analyze(answers)["cronbach_alpha"]["alpha"]
    keyed = sus_items.copy()
    keyed[:, 1::2] = 6 - keyed[:, 1::2]
    alpha_sus = _alpha_by_covariance(keyed)
    half = 1.959963984540054 / math.sqrt(n - 3)
    factor = math.sqrt(alpha_shs * alpha_sus)
    assert pair["n"] == n and pair["excluded"] == 0
    assert pair["r"] == pytest.approx(r)
    assert pair["ci"] == pytest.approx(
        [math.tanh(math.atanh(r) - half), math.tanh(math.atanh(r) + half)]
    )
    assert pair["reliability_score"]["value"] == pytest.approx(alpha_shs)
    assert pair["reliability_companion"]["value"] == pytest.approx(alpha_sus)
    corrected = pair["disattenuated"]
    assert corrected["r"] == pytest.approx(r / factor)
    assert corrected["ci"] == pytest.approx(
        [
            max(-1, math.tanh(math.atanh(r) - half) / factor),
            min(1, math.tanh(math.atanh(r) + half) / factor),
        ]
    )
    assert "Hunter & Schmidt" in corrected["method"]
    assert result["n"] == n and "perceived reliability" in result["method"]


def test_cronbach_alpha_agrees_with_the_analysis():
    answers, _ = _study(n=40, seed=3)
    polarity = np.array([1, -1] * 5)
    assert cronbach_alpha(answers * polarity) == pytest.approx(
        analyze(answers)["cronbach_alpha"]["alpha"]
    )


def test_a_dimension_uses_the_spearman_brown_corrected_pair_correlation():
    answers, sus_items = _study()
    pair = convergent_validity(_data(answers, sus_items))["pairs"]["SR"]["sus"]
    r = np.corrcoef(answers[:, 2], -answers[:, 3])[0, 1]  # q3 and reversed q4
    assert pair["reliability_score"]["value"] == pytest.approx(2 * r / (1 + r))
    assert pair["reliability_score"]["value"] == pytest.approx(
        analyze(answers)["additions"]["spearman_brown"]["SR"]
    )
    assert "Spearman-Brown" in pair["reliability_score"]["method"]


@pytest.mark.parametrize(
    ("upper", "expected"),
    [(0.8499, "distinguishable"), (0.85, "not distinguishable"), (0.8501, "not distinguishable")],
)
def test_verdict_boundary_at_the_ceiling(upper, expected):
    assert verdict([0.2, upper], 0.85) == expected


def test_verdict_follows_the_ceiling_just_above_and_below_the_corrected_upper_bound():
    answers, sus_items = _study()
    data = _data(answers, sus_items)
    corrected = convergent_validity(data)["pairs"]["shs"]["sus"]["disattenuated"]
    # The verdict's interval is the clustered one, which re-estimates the reliabilities.
    upper = corrected["ci95_clustered"]["interval"][1]
    assert upper != corrected["ci"][1]
    assert 0 < upper < 1
    above = convergent_validity(data, ceiling=upper + 1e-6)["pairs"]["shs"]["sus"]
    below = convergent_validity(data, ceiling=upper - 1e-6)["pairs"]["shs"]["sus"]
    assert above["verdict"] == "distinguishable"
    assert f"share at most {round(100 * upper**2)}% of their variance" in above["explanation"]
    assert above["explanation"].startswith(
        "Even corrected for the unreliability of both scales, "
        "the SHS and System Usability Scale (SUS)"
    )
    assert below["verdict"] == "not distinguishable"
    assert "cannot tell the two constructs apart" in below["explanation"]


def test_evaluations_without_the_companion_scale_are_left_out_and_counted():
    answers, sus_items = _study()
    scores = SUS.score_array(sus_items)
    missing = np.zeros(len(answers), dtype=bool)
    missing[[1, 5, 9, 30, 31]] = True
    items = sus_items.copy()
    items[missing] = np.nan
    scores[missing] = np.nan
    pair = convergent_validity(_data(answers, items, scores))["pairs"]["shs"]["sus"]
    kept = ~missing
    shs = (answers[:, 0::2] - answers[:, 1::2]).sum(axis=1) / 20
    assert pair["n"] == kept.sum() == 55 and pair["excluded"] == 5
    assert pair["r"] == pytest.approx(np.corrcoef(shs[kept], scores[kept])[0, 1])
    assert pair["reliability_companion"]["n"] == 55
    assert pair["reliability_score"]["value"] == pytest.approx(
        analyze(answers[kept])["cronbach_alpha"]["alpha"]
    )


def test_a_constant_companion_score_is_not_estimable_with_a_reason_and_no_numbers():
    answers, _ = _study(n=20)
    constant = np.full((20, 10), 3.0)
    pair = convergent_validity(_data(answers, constant))["pairs"]["shs"]["sus"]
    assert pair["verdict"] == "not estimable"
    assert pair["r"] is None and pair["ci"] is None and pair["p"] is None
    assert pair["disattenuated"] is None
    assert (
        pair["reasons"][0]["reason"]
        == "System Usability Scale (SUS) has the same value in every evaluation"
    )
    assert pair["reasons"][0]["message"] == "{name} has the same value in every evaluation"
    assert pair["explanation"].startswith(
        "The SHS and System Usability Scale (SUS) cannot be compared:"
    )


def test_a_reliability_not_above_zero_is_not_estimable():
    rng = np.random.default_rng(11)
    # Items answered independently of one another: alpha near or below zero.
    answers = rng.integers(-2, 3, size=(12, 10))
    _, sus_items = _study(n=12)
    result = convergent_validity(_data(answers, sus_items))
    for score, pairs in result["pairs"].items():
        pair = pairs["sus"]
        reliability = pair["reliability_score"]["value"]
        if reliability is not None and reliability <= 0 and pair["r"] is not None:
            assert pair["verdict"] == "not estimable"
            assert pair["disattenuated"] is None
            assert any("not above 0" in entry["reason"] for entry in pair["reasons"]), score
            break
    else:
        pytest.fail("the random answers gave no reliability at or below zero")


def test_too_few_evaluations_are_not_estimable():
    answers, sus_items = _study(n=3)
    pair = convergent_validity(_data(answers, sus_items))["pairs"]["shs"]["sus"]
    assert pair["verdict"] == "not estimable" and pair["n"] == 3
    assert "needs at least 4 evaluations" in pair["reasons"][0]["reason"]


def test_every_score_is_compared_with_every_companion_scale():
    answers, sus_items = _study()
    result = convergent_validity(_data(answers, sus_items))
    assert result["companions"] == ["sus"]
    assert set(result["pairs"]) == {"shs", *DIMENSION_KEYS}
    for pairs in result["pairs"].values():
        pair = pairs["sus"]
        assert pair["n"] == 60 and pair["method"]
        assert pair["verdict"] in {"distinguishable", "not distinguishable", "not estimable"}
        assert pair["explanation"]
