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
        out["disattenuated"].append(r / math.sqrt(rel_x * rel_y) if rel_x > 0 < rel_y else np.nan)
    return {key: np.array(values, dtype=float) for key, values in out.items()}


def _percentile(values: np.ndarray) -> list[float]:
    return list(np.quantile(values[np.isfinite(values)], [0.025, 0.975]))


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
        _percentile(slow["disattenuated"]), abs=1e-9
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
