"""Participant-clustered intervals of the retest ICCs
(scoring/stats/retest/retest_bootstrap.py) against a plain loop over the
documented draws, which rebuilds each resample's pairs and computes both ICCs
from the two-way ANOVA written out with numpy."""

import numpy as np
import pytest

from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.retest.stability import ONE_PAIR_EACH, SEVERAL_PAIRS, retest_report
from scoring.stats.validation_data import RetestPairs

SEED = 17
RESAMPLES = 400
POLARITY = np.array([1, -1] * 5)


def _answers(level: np.ndarray, rng: np.random.Generator, noise: float) -> np.ndarray:
    """Answers -2..+2 around a judgement level per row, negative items reversed."""
    raw = level[:, None] * POLARITY + rng.normal(scale=noise, size=(len(level), 10))
    return np.clip(np.rint(raw), -2, 2).astype(np.int64)


def _nudged(answers: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A copy with about one answer in ten moved one step."""
    step = rng.choice([-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], answers.shape)
    return np.clip(answers + step, -2, 2)


def _pairs(participants: int, pairs_each: int, seed: int = 3) -> RetestPairs:
    """Each participant's pairs (one per system) are nearly copies of one another:
    their first submissions alike, and their second ones alike."""
    rng = np.random.default_rng(seed)
    person = rng.normal(size=participants)
    first = np.repeat(_answers(person, rng, 0.9), pairs_each, axis=0)
    second = np.repeat(_answers(0.8 * person, rng, 0.9), pairs_each, axis=0)
    return RetestPairs(
        first=_nudged(first, rng),
        second=_nudged(second, rng),
        participant=np.repeat([f"p{i:03d}" for i in range(participants)], pairs_each),
        days=np.full(len(first), 14.0),
    )


def _scores(answers: np.ndarray) -> dict[str, np.ndarray]:
    # From the definition (docs/design/instrument.md §2.3), not from the engine.
    dimensions = (answers[:, 0::2] - answers[:, 1::2]) / 4
    return {"shs": dimensions.mean(axis=1), **dict(zip(DIMENSION_KEYS, dimensions.T, strict=True))}


def _iccs(table: np.ndarray) -> tuple[float, float]:
    """ICC(2,1) and ICC(3,1) of an (n, 2) table from its mean squares (Shrout & Fleiss)."""
    n, k = table.shape
    grand = table.mean()
    msr = k * ((table.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    msc = n * ((table.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    residual = table - table.mean(axis=1, keepdims=True) - table.mean(axis=0) + grand
    mse = (residual**2).sum() / ((n - 1) * (k - 1))
    icc2 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    return icc2, (msr - mse) / (msr + (k - 1) * mse)


def _loop(pairs: RetestPairs, score: str) -> np.ndarray:
    """(RESAMPLES, 2) ICCs: resample b draws row b of Generator(SEED).integers(0, G, (B, G))
    over the participants in sorted order, each drawn participant with all their pairs."""
    keys = sorted(set(pairs.participant))
    rows_of = {key: np.flatnonzero(pairs.participant == key) for key in keys}
    draws = np.random.default_rng(SEED).integers(0, len(keys), size=(RESAMPLES, len(keys)))
    table = np.column_stack([_scores(pairs.first)[score], _scores(pairs.second)[score]])
    out = []
    for draw in draws:
        rows = np.concatenate([rows_of[keys[index]] for index in draw])
        out.append(_iccs(table[rows]))
    return np.array(out)


@pytest.mark.parametrize("score", ["shs", "FA", "RG"])
def test_clustered_icc_intervals_agree_with_a_plain_loop_over_the_same_draws(score):
    pairs = _pairs(participants=40, pairs_each=2)
    figures = retest_report(pairs, resamples=RESAMPLES, seed=SEED)["scores"][score]
    loop = _loop(pairs, score)
    for column, name in enumerate(("icc2_1", "icc3_1")):
        clustered = figures[name]["ci95_clustered"]
        assert clustered["interval"] == pytest.approx(
            list(np.quantile(loop[:, column], [0.025, 0.975])), abs=1e-9
        ), name
        assert (clustered["seed"], clustered["resamples"], clustered["clusters"]) == (
            SEED,
            RESAMPLES,
            40,
        )
        assert clustered["valid_replicates"] == RESAMPLES


def test_pairs_alike_within_a_participant_widen_the_clustered_interval():
    # 384 pairs from 192 participants, two nearly identical pairs each: about 192
    # independent units, not 384; the F interval counts 384.
    pairs = _pairs(participants=192, pairs_each=2)
    report = retest_report(pairs, resamples=1000, seed=SEED)
    assert (report["n"], report["participants"]) == (384, 192)
    for name in ("icc2_1", "icc3_1"):
        icc = report["scores"]["shs"][name]
        f_based, clustered = icc["ci"], icc["ci95_clustered"]["interval"]
        assert clustered[0] <= icc["value"] <= clustered[1]
        assert clustered[1] - clustered[0] > 1.3 * (f_based[1] - f_based[0]), name
    assert report["unit"]["message"] == SEVERAL_PAIRS
    assert report["unit"]["params"] == {"pairs": 384, "participants": 192, "most": 2}
    assert "Pairs: 384; participants: 192; up to 2 pairs" in report["unit"]["reason"]


def test_with_one_pair_per_participant_the_unit_says_so_and_the_intervals_agree_roughly():
    pairs = _pairs(participants=192, pairs_each=1)
    report = retest_report(pairs, resamples=1000, seed=SEED)
    assert report["unit"]["message"] == ONE_PAIR_EACH
    assert report["unit"]["params"] == {"pairs": 192}
    assert "one per participant" in report["unit"]["reason"]
    assert report["unit"]["reason"].endswith("(N = 192).")
    icc = report["scores"]["shs"]["icc3_1"]
    f_based, clustered = icc["ci"], icc["ci95_clustered"]["interval"]
    # Independent pairs: the bootstrap and the F interval estimate the same spread.
    ratio = (clustered[1] - clustered[0]) / (f_based[1] - f_based[0])
    assert 0.7 < ratio < 1.3


def test_too_few_pairs_have_no_clustered_interval_and_constant_resamples_give_no_value():
    report = retest_report(_pairs(participants=2, pairs_each=1), resamples=50, seed=SEED)
    assert report["scores"]["shs"]["icc2_1"] is None  # 2 pairs: nothing to attach to
    # Three participants: a resample drawing one of them three times has no spread.
    three = retest_report(_pairs(participants=3, pairs_each=1, seed=8), resamples=200, seed=1)
    clustered = three["scores"]["shs"]["icc3_1"]["ci95_clustered"]
    assert clustered["valid_replicates"] < 200


def test_the_validation_programme_passes_its_seed_and_resamples_to_the_retest():
    from scoring.stats.validation import validation_analysis
    from scoring.stats.validation_data import ValidationData

    pairs = _pairs(participants=20, pairs_each=2)
    data = ValidationData(
        answers=pairs.first,
        participant=pairs.participant,
        system=np.array(["A", "B"] * 20),
        language=np.array(["en"] * 40),
        retest=pairs,
    )
    retest = validation_analysis(data, parts=("retest",), resamples=30, seed=99)["retest"]
    assert retest["bootstrap"]["seed"] == 99 and retest["bootstrap"]["resamples"] == 30
    assert retest["scores"]["shs"]["icc2_1"]["ci95_clustered"]["resamples"] == 30


def test_resamples_below_one_are_refused():
    with pytest.raises(ValueError, match="resamples"):
        retest_report(_pairs(participants=5, pairs_each=1), resamples=0)
