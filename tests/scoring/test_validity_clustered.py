"""Participant-clustered intervals of convergent validity
(scoring/stats/validity/convergent_bootstrap.py) against a slow loop over the
same draws that recomputes every figure with the plain functions of
scoring/stats/validity/convergent.py on the re-indexed rows."""

import math

import numpy as np
import pytest

from scoring.instruments.companions import COMPANION_SCALES
from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.cluster import ParticipantBootstrap
from scoring.stats.validation_data import ValidationData
from scoring.stats.validity.convergent import (
    SCORES,
    convergent_validity,
    cronbach_alpha,
    spearman_brown_pair,
    verdict,
)

SUS = COMPANION_SCALES["sus"]
RESAMPLES = 60
SEED = 11


def _study(participants: int = 40, seed: int = 5) -> ValidationData:
    """Two evaluations per participant sharing a person effect; a few without SUS."""
    rng = np.random.default_rng(seed)
    n = 2 * participants
    person = np.repeat(rng.normal(size=participants), 2)
    latent = person + rng.normal(scale=0.7, size=n)
    polarity = np.array([1, -1] * 5)
    noise = rng.normal(scale=1.0, size=(n, 10))
    answers = np.clip(np.rint(latent[:, None] * polarity + noise), -2, 2).astype(int)
    sus_noise = rng.normal(scale=0.9, size=(n, 10))
    sus = np.clip(np.rint(3 + 0.6 * latent[:, None] * polarity + sus_noise), 1, 5)
    sus[:3] = np.nan  # no SUS for three evaluations
    scores = SUS.score_array(sus)
    return ValidationData(
        answers=answers,
        participant=np.repeat([f"p{i:03d}" for i in range(participants)], 2),
        system=np.array(["A", "B"] * participants),
        language=np.array(["en"] * n),
        companion_items={"sus": sus},
        companion_scores={"sus": scores},
    )


def _score(answers: np.ndarray, score: str) -> np.ndarray:
    # Written from the definition (docs/design/instrument.md §2.3), not from the engine.
    dimensions = (answers[:, 0::2] - answers[:, 1::2]) / 4
    return dimensions.mean(axis=1) if score == "shs" else dimensions[:, DIMENSION_KEYS.index(score)]


def _reliability(answers: np.ndarray, score: str) -> float:
    if score == "shs":
        return cronbach_alpha(answers * np.array([1, -1] * 5))
    index = DIMENSION_KEYS.index(score)
    return spearman_brown_pair(answers[:, 2 * index], -answers[:, 2 * index + 1])


def _corrected(r: float, rel_x: float | None, rel_y: float | None) -> float:
    """r / sqrt(rel_x rel_y); without bound (r's sign) where a reliability is not above 0."""
    if rel_x is None or rel_y is None or not np.isfinite(r):
        return np.nan
    if rel_x > 0 and rel_y > 0:
        return r / math.sqrt(rel_x * rel_y)
    return math.copysign(math.inf, r) if r != 0 else np.nan


def _slow(data: ValidationData, score: str) -> dict[str, np.ndarray]:
    rows = np.isfinite(data.companion_scores["sus"])
    answers = data.answers[rows].astype(float)
    y, items = data.companion_scores["sus"][rows], data.companion_items["sus"][rows]
    boot = ParticipantBootstrap(data.participant[rows], seed=SEED, resamples=RESAMPLES)
    out = {"r": [], "rel_score": [], "rel_companion": [], "disattenuated": []}
    for b in range(RESAMPLES):
        take = boot.rows(b)
        r = np.corrcoef(_score(answers[take], score), y[take])[0, 1]
        rel_x = _reliability(answers[take], score)
        rel_y = cronbach_alpha(SUS.keyed(items[take]))
        out["r"].append(r)
        out["rel_score"].append(rel_x)
        out["rel_companion"].append(rel_y)
        out["disattenuated"].append(_corrected(r, rel_x, rel_y))
    return {key: np.array(values, dtype=float) for key, values in out.items()}


def _percentile(values: np.ndarray) -> list[float]:
    return list(np.quantile(values[np.isfinite(values)], [0.025, 0.975]))


def _corrected_percentile(values: np.ndarray) -> list[float]:
    """Unbounded resamples as a value far beyond any correlation, so that numpy's
    linear rule reaches past 1 wherever it leans on one; then clipped to [-1, 1]."""
    known = values[~np.isnan(values)]
    stand_in = np.clip(known, -1e12, 1e12)
    return list(np.clip(np.quantile(stand_in, [0.025, 0.975]), -1.0, 1.0))


@pytest.mark.parametrize("score", SCORES)
def test_clustered_intervals_agree_with_a_slow_loop_over_the_same_draws(score):
    data = _study()
    pair = convergent_validity(data, resamples=RESAMPLES, seed=SEED)["pairs"][score]["sus"]
    slow = _slow(data, score)
    assert pair["ci95_clustered"]["interval"] == pytest.approx(_percentile(slow["r"]), abs=1e-9)
    assert pair["reliability_score"]["ci95_clustered"]["interval"] == pytest.approx(
        _percentile(slow["rel_score"]), abs=1e-9
    )
    assert pair["reliability_companion"]["ci95_clustered"]["interval"] == pytest.approx(
        _percentile(slow["rel_companion"]), abs=1e-9
    )
    assert pair["disattenuated"]["ci95_clustered"]["interval"] == pytest.approx(
        _corrected_percentile(slow["disattenuated"]), abs=1e-9
    )
    assert pair["disattenuated"]["ci95_clustered"]["unbounded_replicates"] == int(
        np.isinf(slow["disattenuated"]).sum()
    )
    clustered = pair["ci95_clustered"]
    # p000 has no SUS at all: 39 participants are resampled.
    assert (clustered["seed"], clustered["resamples"], clustered["clusters"]) == (SEED, 60, 39)


def test_the_clustered_interval_is_wider_than_fishers_when_a_participants_two_ratings_agree():
    # Each participant's two evaluations are copies: 40 independent units, not 80.
    data = _study(participants=40)
    answers = data.answers.copy()
    answers[1::2] = answers[0::2]
    sus = data.companion_items["sus"].copy()
    sus[4::2] = sus[5::2]
    copied = ValidationData(
        answers=answers,
        participant=data.participant,
        system=data.system,
        language=data.language,
        companion_items={"sus": sus},
        companion_scores={"sus": SUS.score_array(sus)},
    )
    pair = convergent_validity(copied, resamples=400, seed=SEED)["pairs"]["shs"]["sus"]
    fisher, clustered = pair["ci"], pair["ci95_clustered"]["interval"]
    assert clustered[1] - clustered[0] > 1.2 * (fisher[1] - fisher[0])


def test_the_validation_programme_passes_its_seed_and_resamples():
    from scoring.stats.validation import validation_analysis

    result = validation_analysis(_study(), parts=("convergent",), resamples=30, seed=99)
    boot = result["convergent"]["pairs"]["shs"]["sus"]["ci95_clustered"]
    assert (boot["seed"], boot["resamples"]) == (99, 30)
    assert result["convergent"]["bootstrap"]["seed"] == 99


def test_resamples_below_one_are_refused():
    with pytest.raises(ValueError, match="resamples"):
        convergent_validity(_study(), resamples=0)


def _weak_companion(n: int, seed: int, link: float, load: float) -> ValidationData:
    """One evaluation per participant; the SUS items carry the shared judgement only
    weakly (loading `load` against unit noise), so its alpha is low and, over n
    evaluations, uncertain."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=n)
    polarity = np.array([1, -1] * 5)
    shs = np.clip(np.rint(latent[:, None] * polarity + rng.normal(size=(n, 10))), -2, 2)
    shared = link * latent + math.sqrt(1 - link**2) * rng.normal(size=n)
    sus = np.rint(3 + load * shared[:, None] * polarity + rng.normal(size=(n, 10)))
    sus = np.clip(sus, 1, 5)
    return ValidationData(
        answers=shs.astype(int),
        participant=np.array([f"p{i:03d}" for i in range(n)]),
        system=np.array(["A"] * n),
        language=np.array(["en"] * n),
        companion_items={"sus": sus},
        companion_scores={"sus": SUS.score_array(sus)},
    )


def _alpha(items: np.ndarray) -> float:
    covariance = np.cov(items, rowvar=False)
    k = len(covariance)
    return k / (k - 1) * (1 - np.trace(covariance) / covariance.sum())


def _corrected_by_loop(data: ValidationData, resamples: int, seed: int) -> np.ndarray:
    """The SHS-SUS corrected r in every resample, reliabilities re-estimated, from the
    documented draws (row b of Generator(seed).integers(0, G, (B, G)), participants in
    sorted order), Brooke's scoring and alpha written out here."""
    polarity = np.array([1, -1] * 5)
    keyed_shs = data.answers * polarity
    sus = data.companion_items["sus"]
    keyed_sus = np.where(polarity > 0, sus - 1, 5 - sus)
    sus_score = 2.5 * keyed_sus.sum(axis=1)
    order = np.argsort(data.participant)  # one evaluation each: participant = row
    draws = np.random.default_rng(seed).integers(0, len(order), size=(resamples, len(order)))
    out = []
    for draw in draws:
        rows = order[draw]
        r = np.corrcoef(keyed_shs[rows].sum(axis=1), sus_score[rows])[0, 1]
        out.append(_corrected(r, _alpha(keyed_shs[rows]), _alpha(keyed_sus[rows])))
    return np.array(out)


def test_an_unreliable_companion_is_not_distinguishable_once_its_alpha_is_uncertain():
    # 300 evaluations, SUS alpha about .15: with alpha taken as known the corrected
    # interval stays below .85 ("distinguishable" by the old rule); re-estimating
    # alpha in every resample, some resamples give alpha <= 0 (no bound) and many a
    # corrected r above .85, so the pair cannot be told apart.
    data = _weak_companion(300, seed=3, link=0.6, load=0.12)
    pair = convergent_validity(data, resamples=2000, seed=SEED)["pairs"]["shs"]["sus"]
    corrected = pair["disattenuated"]
    # The old interval, by hand: Fisher bounds of r over sqrt(alpha_shs alpha_sus).
    r, n = pair["r"], pair["n"]
    half = 1.959963984540054 / math.sqrt(n - 3)
    polarity, sus = np.array([1, -1] * 5), data.companion_items["sus"]
    factor = math.sqrt(_alpha(data.answers * polarity) * _alpha(np.where(polarity > 0, sus, -sus)))
    old = [math.tanh(math.atanh(r) - half) / factor, math.tanh(math.atanh(r) + half) / factor]
    assert corrected["ci"] == pytest.approx(old)
    assert pair["reliability_companion"]["value"] < 0.2
    assert old[1] < 0.8 and verdict(corrected["ci"], 0.85) == "distinguishable"
    # The new interval against the loop: beyond the ceiling in well over 2.5% of
    # the resamples, so the upper bound reaches past it (clipped to 1).
    loop = _corrected_by_loop(data, 2000, SEED)
    beyond = np.mean(loop >= 0.85)
    assert beyond > 0.08
    clustered = corrected["ci95_clustered"]
    assert clustered["interval"] == pytest.approx(_corrected_percentile(loop), abs=1e-9)
    assert clustered["interval"][1] == 1.0
    assert clustered["unbounded_replicates"] == int(np.isinf(loop).sum()) > 0
    assert pair["verdict"] == "not distinguishable"
    assert "cannot tell the two constructs apart" in pair["explanation"]
    assert pair["params"]["bound"] == 1.0 and pair["params"]["share"] == 100


def test_a_clearly_distinct_companion_stays_distinguishable():
    # A reliable SUS (alpha about .8) that shares little with the SHS.
    data = _weak_companion(300, seed=3, link=0.3, load=0.8)
    pair = convergent_validity(data, resamples=2000, seed=SEED)["pairs"]["shs"]["sus"]
    corrected = pair["disattenuated"]
    assert pair["reliability_companion"]["value"] > 0.7
    assert corrected["ci95_clustered"]["unbounded_replicates"] == 0
    loop = _corrected_by_loop(data, 2000, SEED)
    assert corrected["ci95_clustered"]["interval"] == pytest.approx(
        _corrected_percentile(loop), abs=1e-9
    )
    assert max(abs(bound) for bound in corrected["ci95_clustered"]["interval"]) < 0.6
    assert pair["verdict"] == "distinguishable"


def test_too_few_resamples_with_a_value_leave_the_verdict_not_estimable():
    # Four participants of ten evaluations: the SHS varies only in b's, the SUS only
    # in a's. A resample without both of them (57% of them) has a constant score
    # and no r, so the clustered interval, and with it the verdict, is missing.
    data = _weak_companion(40, seed=3, link=0.6, load=0.8)
    participant = np.repeat(["a", "b", "c", "d"], 10)
    answers = np.where((participant == "b")[:, None], data.answers, 0)
    sus = np.where((participant == "a")[:, None], data.companion_items["sus"], 3.0)
    four = ValidationData(
        answers=answers,
        participant=participant,
        system=data.system,
        language=data.language,
        companion_items={"sus": sus},
        companion_scores={"sus": SUS.score_array(sus)},
    )
    pair = convergent_validity(four, resamples=400, seed=SEED)["pairs"]["shs"]["sus"]
    assert pair["disattenuated"]["ci"] is not None  # the fixed-reliability one exists
    clustered = pair["disattenuated"]["ci95_clustered"]
    assert clustered["interval"] is None and clustered["valid_replicates"] < 200
    assert pair["verdict"] == "not estimable"
    assert "fewer than half of the resamples (400)" in pair["explanation"]


@pytest.mark.parametrize("unbounded", [0, 1, 30, 60])
def test_unbounded_replicates_count_at_their_end_of_the_order(unbounded):
    from scoring.stats.cluster import unbounded_percentile_interval

    values = np.random.default_rng(unbounded).normal(size=1000)
    values[:unbounded] = np.inf
    values[unbounded : 2 * unbounded] = -np.inf
    values[-5:] = np.nan  # no value: left out, as before
    low, high = unbounded_percentile_interval(values, 0.05)
    # A finite stand-in beyond every value gives numpy's order statistics.
    stand_in = np.nan_to_num(values[~np.isnan(values)], posinf=1e300, neginf=-1e300)
    expected_low, expected_high = np.quantile(stand_in, [0.025, 0.975])
    for got, expected in ((low, expected_low), (high, expected_high)):
        if abs(expected) > 1e200:  # the quantile leans on a stand-in
            assert got == math.copysign(math.inf, expected)
        else:
            assert got == pytest.approx(expected, abs=1e-12)
    if unbounded >= 30:  # 3% at each end: both bounds have no limit
        assert (low, high) == (-math.inf, math.inf)
