"""Scoring of single response sets and arrays (docs/design/instrument.md §2.3, paper section 5)."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.scores.engine import (
    FLAGGED_SEPARATOR,
    SCORE_COLUMNS,
    InvalidResponses,
    Problem,
    band_for_shs,
    parse_answer,
    score_answers,
    score_array,
    score_one,
    validate,
)

ITEMS = [f"q{number}" for number in range(1, 11)]
DIMENSIONS = ["FA", "SR", "LC", "DP", "RG"]


def answers_from_pairs(*pairs):
    """Item order q1..q10 from the (a, b) pair of each dimension FA..RG."""
    return tuple(answer for pair in pairs for answer in pair)


answer = st.integers(min_value=-2, max_value=2)
answer_sets = st.lists(answer, min_size=10, max_size=10).map(tuple)


# Given the hand-checked patterns of the paper's scoring rule ...


def test_every_item_strongly_agreed_scores_zero_and_flags_every_pair():
    score = score_answers((2,) * 10)
    assert score.dimension_scores == dict.fromkeys(DIMENSIONS, 0.0)
    assert score.consistency == dict.fromkeys(DIMENSIONS, 1.0)
    assert (score.shs, score.shs100, score.band) == (0.0, 50.0, "moderate")
    assert score.flagged_pairs == tuple(DIMENSIONS)


def test_every_item_strongly_disagreed_scores_zero_and_flags_every_pair():
    score = score_answers((-2,) * 10)
    assert score.dimension_scores == dict.fromkeys(DIMENSIONS, 0.0)
    assert score.consistency == dict.fromkeys(DIMENSIONS, -1.0)
    assert (score.shs, score.shs100, score.band) == (0.0, 50.0, "moderate")
    assert score.flagged_pairs == tuple(DIMENSIONS)


def test_all_neutral_is_the_midpoint_without_flags():
    score = score_answers((0,) * 10)
    assert score.dimension_scores == dict.fromkeys(DIMENSIONS, 0.0)
    assert score.consistency == dict.fromkeys(DIMENSIONS, 0.0)
    assert (score.shs, score.shs100, score.band, score.flagged_pairs) == (0.0, 50.0, "moderate", ())


def test_best_possible_answers():
    score = score_answers(answers_from_pairs(*[(2, -2)] * 5))
    assert score.dimension_scores == dict.fromkeys(DIMENSIONS, 1.0)
    assert score.consistency == dict.fromkeys(DIMENSIONS, 0.0)
    assert (score.shs, score.shs100, score.band, score.flagged_pairs) == (1.0, 100.0, "high", ())


def test_worst_possible_answers():
    score = score_answers(answers_from_pairs(*[(-2, 2)] * 5))
    assert score.dimension_scores == dict.fromkeys(DIMENSIONS, -1.0)
    assert (score.shs, score.shs100, score.band, score.flagged_pairs) == (
        -1.0,
        0.0,
        "very_low",
        (),
    )


def test_alternating_plus_and_minus_two_by_item_number():
    # q1 +2, q2 -2, q3 +2, ...: every positive item agreed, every negative disagreed.
    score = score_answers((2, -2) * 5)
    assert score.shs == 1.0
    # q1 -2, q2 +2, ...: the reverse.
    assert score_answers((-2, 2) * 5).shs == -1.0


def test_a_mixed_set_worked_by_hand():
    # FA (2, -1): s = 3/4, c = 1/4 | SR (1, 1): s = 0, c = 1/2 (flagged)
    # LC (0, -2): s = 1/2, c = -1/2 (flagged) | DP (-1, 0): s = -1/4, c = -1/4
    # RG (1, -1): s = 1/2, c = 0. SHS = (0.75 + 0 + 0.5 - 0.25 + 0.5) / 5 = 0.3
    score = score_answers(answers_from_pairs((2, -1), (1, 1), (0, -2), (-1, 0), (1, -1)))
    assert score.dimension_scores == {"FA": 0.75, "SR": 0.0, "LC": 0.5, "DP": -0.25, "RG": 0.5}
    assert score.consistency == {"FA": 0.25, "SR": 0.5, "LC": -0.5, "DP": -0.25, "RG": 0.0}
    assert score.shs == pytest.approx(0.3)
    assert score.shs100 == 65.0
    assert score.band == "moderate"
    assert score.flagged_pairs == ("SR", "LC")


@pytest.mark.parametrize(
    ("pairs", "shs", "band"),
    [
        # sum(a - b) = 10 -> SHS exactly +0.5: the lower edge of "high" belongs to it.
        (((2, -1), (2, -1), (1, -1), (1, 0), (1, 0)), 0.5, "high"),
        # one step below: 9 / 20 = 0.45
        (((2, -1), (2, -1), (1, -1), (1, 0), (0, 0)), 0.45, "moderate"),
        # sum 0 -> SHS exactly 0: moderate, not low.
        (((1, 1), (0, 0), (-1, -1), (2, 2), (-2, -2)), 0.0, "moderate"),
        (((0, 1), (0, 0), (0, 0), (0, 0), (0, 0)), -0.05, "low"),
        # sum -10 -> SHS exactly -0.5: low, not very low.
        (((-2, 1), (-2, 1), (-1, 1), (-1, 0), (-1, 0)), -0.5, "low"),
        (((-2, 1), (-2, 1), (-1, 1), (-1, 0), (-1, 1)), -0.55, "very_low"),
    ],
)
def test_band_edges_of_paper_table_2(pairs, shs, band):
    score = score_answers(answers_from_pairs(*pairs))
    assert score.shs == pytest.approx(shs, abs=1e-12)
    assert score.band == band
    assert band_for_shs(shs) == band


@pytest.mark.parametrize(
    ("pair", "flagged"),
    [((1, 0), False), ((0, -1), False), ((1, -1), False), ((1, 1), True), ((-1, -1), True)],
)
def test_consistency_limit_is_inclusive(pair, flagged):
    # |c| = 0.25 is still consistent; only |c| > 0.25 is flagged.
    score = score_answers(answers_from_pairs(pair, (0, 0), (0, 0), (0, 0), (0, 0)))
    assert ("FA" in score.flagged_pairs) is flagged


def test_as_dict_has_the_score_columns_in_order():
    figures = score_answers((0,) * 10).as_dict()
    assert tuple(figures) == SCORE_COLUMNS
    assert figures["flagged_pairs"] == []


def test_stored_values_are_the_figures_with_the_flags_as_one_text():
    # FA (1, 1) and SR (-1, -1) have |a + b| = 2: both pairs are flagged.
    score = score_answers(answers_from_pairs((1, 1), (-1, -1), (0, 0), (2, -2), (0, 0)))
    stored = score.stored_values()
    assert tuple(stored) == SCORE_COLUMNS
    assert stored["flagged_pairs"] == "FA;SR"
    assert {k: v for k, v in stored.items() if k != "flagged_pairs"} == {
        k: v for k, v in score.as_dict().items() if k != "flagged_pairs"
    }
    assert score_answers((0,) * 10).stored_values()["flagged_pairs"] == ""


# Property tests: bounds and symmetry hold for every possible response set.


@settings(max_examples=300, deadline=None)
@given(answer_sets)
def test_scores_stay_within_their_ranges(answers):
    score = score_answers(answers)
    values = [*score.dimension_scores.values(), *score.consistency.values(), score.shs]
    assert all(-1.0 <= value <= 1.0 for value in values)
    assert 0.0 <= score.shs100 <= 100.0
    assert score.shs100 == pytest.approx(50 * (score.shs + 1))
    assert score.shs == pytest.approx(sum(score.dimension_scores.values()) / 5)


@settings(max_examples=300, deadline=None)
@given(answer_sets)
def test_mirrored_answers_mirror_the_scores(answers):
    # Answering every item with the opposite answer negates direction and
    # consistency, and flags the same pairs.
    score = score_answers(answers)
    mirrored = score_answers(tuple(-value for value in answers))
    assert mirrored.shs == -score.shs
    assert mirrored.dimension_scores == {k: -v for k, v in score.dimension_scores.items()}
    assert mirrored.consistency == {k: -v for k, v in score.consistency.items()}
    assert mirrored.flagged_pairs == score.flagged_pairs


@settings(max_examples=300, deadline=None)
@given(answer_sets)
def test_swapping_the_items_of_each_pair_negates_direction_only(answers):
    swapped = tuple(answers[index ^ 1] for index in range(10))  # q1<->q2, q3<->q4, ...
    score, other = score_answers(answers), score_answers(swapped)
    assert other.dimension_scores == {k: -v for k, v in score.dimension_scores.items()}
    assert other.consistency == score.consistency
    assert other.flagged_pairs == score.flagged_pairs


@settings(max_examples=200, deadline=None)
@given(answer_sets, answer_sets)
def test_band_order_follows_the_score(first, second):
    order = ["very_low", "low", "moderate", "high"]
    one, two = score_answers(first), score_answers(second)
    if one.shs <= two.shs:
        assert order.index(one.band) <= order.index(two.band)


# The vectorised scorer agrees with the single one.


def test_vectorised_and_single_scorers_agree_on_random_data():
    rng = np.random.default_rng(20260213)
    answers = rng.integers(-2, 3, size=(3000, 10))
    scored = score_array(answers)
    for row, values in enumerate(answers):
        single = score_answers(tuple(int(value) for value in values))
        assert list(scored.dimension_scores[row]) == list(single.dimension_scores.values())
        assert list(scored.consistency[row]) == list(single.consistency.values())
        assert scored.shs[row] == single.shs
        assert scored.shs100[row] == single.shs100
        assert scored.bands[row] == single.band
        assert scored.flagged_pairs[row] == FLAGGED_SEPARATOR.join(single.flagged_pairs)


@settings(max_examples=100, deadline=None)
@given(st.lists(answer_sets, min_size=1, max_size=20))
def test_vectorised_scorer_agrees_on_any_batch(batch):
    scored = score_array(np.array(batch, dtype=np.int8))
    for row, answers in enumerate(batch):
        single = score_answers(answers)
        assert scored.shs[row] == single.shs
        assert scored.bands[row] == single.band


def test_score_array_accepts_an_empty_batch_and_whole_floats():
    assert len(score_array(np.zeros((0, 10), dtype=int))) == 0
    assert score_array(np.full((2, 10), 1.0)).shs.tolist() == [0.0, 0.0]


@pytest.mark.parametrize(
    ("answers", "message"),
    [
        (np.zeros((3, 9), dtype=int), "expected an (n, 10) array"),
        (np.full((1, 10), 3), "outside -2..+2"),
        (np.full((1, 10), 0.5), "whole numbers"),
        (np.full((1, 10), np.nan), "whole numbers"),
        (np.ones((1, 10), dtype=bool), "must be integers"),
    ],
)
def test_score_array_refuses_what_was_not_validated(answers, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        score_array(answers)


# Validation names every problem at once.


def test_validation_lists_every_problem_with_item_value_and_reason():
    answers, problems = validate(
        {
            "q1": 3,
            "q2": "x",
            "q3": None,
            "q4": 1.5,
            "q5": True,
            "q6": "",
            "q7": -3,
            "q8": "2",
            "q9": 2.0,
            "q11": 1,
        }
    )
    assert answers is None
    assert [(p.field, p.message) for p in problems] == [
        ("q1", "3 is out of range (answers are -2..+2)"),
        ("q2", "'x' is not an integer answer"),
        ("q3", "answer is missing"),
        ("q4", "1.5 is not an integer answer"),
        ("q5", "True is not an integer answer"),
        ("q6", "answer is missing"),
        ("q7", "-3 is out of range (answers are -2..+2)"),
        ("q10", "answer is missing"),
        ("q11", "is not an item of shs-1.0"),
    ]
    assert problems[0].as_dict() == {
        "field": "q1",
        "value": 3,
        "message": "3 is out of range (answers are -2..+2)",
    }


def test_score_one_raises_with_all_problems():
    with pytest.raises(InvalidResponses) as raised:
        score_one({"q1": 9})
    assert len(raised.value.problems) == 10
    assert "q1: 9 is out of range" in str(raised.value)
    assert all(isinstance(problem, Problem) for problem in raised.value.problems)


def test_score_one_reads_text_answers():
    texts = ["2", "-2", "+1", " 1 ", "0", "-0", "2.0", "-2", "1", "-1"]
    responses = dict(zip(ITEMS, texts, strict=True))
    assert score_one(responses).answers == (2, -2, 1, 1, 0, 0, 2, -2, 1, -1)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (2, (2, None)),
        (np.int64(-2), (-2, None)),
        (1.0, (1, None)),
        ("+2", (2, None)),
        ("1.00", (1, None)),
        ("٣", (None, "'٣' is not an integer answer")),
        ("1e0", (None, "'1e0' is not an integer answer")),
        (float("nan"), (None, "nan is not an integer answer")),
        (np.bool_(True), (None, "np.True_ is not an integer answer")),
        ([1], (None, "[1] is not an integer answer")),
        ("   ", (None, "answer is missing")),
    ],
)
def test_parse_answer(value, expected):
    assert parse_answer(value) == expected


def test_a_huge_number_is_out_of_range_and_shown_shortened():
    answer, why = parse_answer("9" * 5000)
    assert answer is None
    assert why.endswith("… is out of range (answers are -2..+2)")
    assert len(why) < 100


def test_keys_of_any_type_are_reported_not_crashed_on():
    _, problems = validate({**dict.fromkeys(ITEMS, 0), 1: 2, None: 3})
    assert sorted(problem.field for problem in problems) == ["1", "None"]
