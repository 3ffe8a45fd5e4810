"""The quality flags' rules (docs/design/analysis.md §8.10): one row and arrays agree, and
the analysis without flagged evaluations is the analysis of the kept rows."""

import numpy as np
import pytest

from scoring.instruments.shs import DIMENSIONS, ITEM_KEYS, ITEMS
from scoring.scores.engine import score_answers
from scoring.scores.quality import (
    DEFAULT_SPEEDING_SECONDS,
    FLAG_KEYS,
    any_flag,
    flag_arrays,
    is_inconsistent,
    is_speeding,
    is_straight_lined,
    too_few_turns,
)
from scoring.stats.reliability.analysis import analyze
from scoring.stats.reliability.flagged import quality_summary

POSITIVE = [ITEM_KEYS.index(d.positive_item) for d in DIMENSIONS]
NEGATIVE = [ITEM_KEYS.index(d.negative_item) for d in DIMENSIONS]


@pytest.mark.parametrize(
    ("seconds", "threshold", "flag"),
    [(19.96, 20, 1), (20.0, 20, 0), (300, 20, 0), (0.5, 0, 0), (29, 30, 1)],
)
def test_speeding_is_strictly_below_the_threshold(seconds, threshold, flag):
    assert is_speeding(seconds, threshold) == flag


def test_the_default_threshold_is_two_seconds_per_item():
    assert DEFAULT_SPEEDING_SECONDS == 2 * len(ITEMS)


@pytest.mark.parametrize(
    ("answers", "flag"),
    [([0] * 10, 1), ([2] * 10, 1), ([-2] * 10, 1), ([1] * 9 + [0], 0), ([0, 1] * 5, 0)],
)
def test_straight_lining_is_ten_equal_answers(answers, flag):
    assert is_straight_lined(answers) == flag
    flags = flag_arrays(np.array([answers]), np.array([300.0]), 20, [0])
    assert flags["straight_lining"][0] == flag


def test_inconsistency_is_the_engines_pair_flag():
    consistent = score_answers([0] * 10)
    contradictory = score_answers([2] * 10)  # agrees with both items of every pair
    assert is_inconsistent(consistent.flagged_pairs) == 0
    assert is_inconsistent(consistent.stored_values()["flagged_pairs"]) == 0
    assert is_inconsistent(contradictory.flagged_pairs) == 1
    assert is_inconsistent(contradictory.stored_values()["flagged_pairs"]) == 1


@pytest.mark.parametrize(
    ("user_turns", "logged", "overridden", "minimum", "flag"),
    [
        (2, 6, False, 6, 1),  # the transcript counts, not the log
        (6, 0, False, 6, 0),
        (0, 0, False, 6, 1),  # a transcript without a user turn is data
        (None, 5, False, 6, 1),
        (None, 6, False, 6, 0),
        (None, 0, True, 6, 1),  # ended below the minimum, reason recorded
        (None, 0, False, 6, None),  # nothing recorded: cannot be judged
        (None, 0, True, 0, 0),
    ],
)
def test_too_few_turns(user_turns, logged, overridden, minimum, flag):
    assert (
        too_few_turns(
            user_turns=user_turns, logged_prompts=logged, overridden=overridden, minimum=minimum
        )
        == flag
    )


def test_arrays_agree_with_the_row_rules():
    rng = np.random.default_rng(7)
    answers = rng.integers(-2, 3, size=(400, 10))
    answers[:20] = rng.integers(-2, 3, size=(20, 1))  # some straight-liners
    seconds = rng.uniform(0, 60, size=400)
    few = [None, 0, 1] * 133 + [1]

    flags = flag_arrays(answers, seconds, 20, few)

    for i, row in enumerate(answers.tolist()):
        assert flags["speeding"][i] == is_speeding(seconds[i], 20)
        assert flags["straight_lining"][i] == is_straight_lined(row)
        assert flags["inconsistent_pairs"][i] == is_inconsistent(score_answers(row).flagged_pairs)
        assert flags["too_few_turns"][i] == (few[i] == 1)
    assert flags["straight_lining"][:20].all()


def _alpha(items: np.ndarray) -> float:
    k = items.shape[1]
    return k / (k - 1) * (1 - items.var(axis=0, ddof=1).sum() / items.sum(axis=1).var(ddof=1))


def test_the_analysis_without_flagged_evaluations_is_that_of_the_kept_rows():
    # Given answers whose consistent rows vary, a speeder, a straight-liner and a
    # block with too few turns
    rng = np.random.default_rng(3)
    answers = rng.integers(-2, 3, size=(60, 10))
    answers[:, NEGATIVE] = -answers[:, POSITIVE] + rng.integers(-1, 2, size=(60, 5))
    answers = np.clip(answers, -2, 2)
    answers[5] = 0
    seconds = np.full(60, 120.0)
    seconds[7] = 11.0
    few = [0] * 60
    few[9], few[10] = 1, None

    summary = quality_summary(answers, seconds, 20, few, analyze(answers), small_sample_n=30)

    # Then each flag counts what it marks, of what it could judge
    counts = {flag["key"]: (flag["flagged"], flag["judged"]) for flag in summary["flags"]}
    inconsistent = int((np.abs(answers[:, POSITIVE] + answers[:, NEGATIVE]) > 1).any(1).sum())
    assert counts == {
        "speeding": (1, 60),
        "straight_lining": (1, 60),
        "inconsistent_pairs": (inconsistent, 60),
        "too_few_turns": (1, 59),
    }
    # And the kept column is computed, independently, from the rows no flag marks
    kept = np.array(
        [
            i not in (5, 7, 9)
            and not (np.abs(answers[i, POSITIVE] + answers[i, NEGATIVE]) > 1).any()
            for i in range(60)
        ]
    )
    assert summary["kept"] == kept.sum() and summary["left_out"] == 60 - kept.sum()
    assert summary["n"] == 60 and summary["kept"] >= 10
    rows = answers[kept]
    polarity = np.array([item.polarity for item in ITEMS])
    dimension = (rows[:, POSITIVE] - rows[:, NEGATIVE]) / 4
    figures = {row["figure"]: row for row in summary["figures"]}
    assert figures["alpha"]["kept"] == pytest.approx(_alpha(rows * polarity))
    assert figures["alpha"]["all"] == pytest.approx(_alpha(answers * polarity))
    assert figures["shs_mean"]["kept"] == pytest.approx(dimension.mean(axis=1).mean())
    assert figures["shs_sd"]["kept"] == pytest.approx(dimension.mean(axis=1).std(ddof=1))
    for column, d in enumerate(DIMENSIONS):
        assert figures[f"mean_{d.key}"]["kept"] == pytest.approx(dimension[:, column].mean())
    assert figures["alpha"]["kept"] != figures["alpha"]["all"]


def test_any_flag_leaves_out_each_flag():
    for key in FLAG_KEYS:
        flags = {k: np.array([False, False]) for k in FLAG_KEYS}
        flags[key] = np.array([True, False])
        assert any_flag(flags).tolist() == [True, False]
