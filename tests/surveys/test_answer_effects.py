"""The participant and system effects of the simulated answers (surveys/answer_effects.py,
docs/design/command-line.md §9.6).

The figures are checked on 20,000 simulated participants, where the standard
error of an ICC near .35 is about .006, against computations written out here:
the one-way ANOVA ICC(1) (the model is solved on Pearson's r of the pairs) and
Cohen's d between two systems. The command is checked on a small study run
through the real protocol: it stores exactly the model's answers for the
systems each session was allocated.
"""

import io

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from scoring.scores.engine import score_array
from surveys.answer_effects import (
    DEFAULT_PARTICIPANT_ICC,
    DEFAULT_SYSTEM_DIFFERENCE,
    NO_EFFECTS,
    AnswerEffects,
    AnswerEffectsError,
    EffectDraws,
    factor_shift,
    system_offsets,
)
from surveys.answer_model import CALIBRATED, DIMENSION_MEANS, DIMENSION_SDS, dimension_scores
from surveys.models import Evaluation, LLMSystem

PARTICIPANTS = 20_000


def _one_way_icc(first: np.ndarray, second: np.ndarray) -> float:
    """ICC(1) of pairs from the one-way ANOVA mean squares (Shrout & Fleiss 1979)."""
    pairs = np.column_stack([first, second])
    n, k = pairs.shape
    means = pairs.mean(axis=1)
    between = k * np.sum((means - pairs.mean()) ** 2) / (n - 1)
    within = np.sum((pairs - means[:, None]) ** 2) / (n * (k - 1))
    return float((between - within) / (between + (k - 1) * within))


def _cohens_d(low: np.ndarray, high: np.ndarray) -> float:
    pooled = np.sqrt((np.var(low, ddof=1) + np.var(high, ddof=1)) / 2)
    return float((np.mean(high) - np.mean(low)) / pooled)


def _study(effects: AnswerEffects, seed: int, offsets=(0.0, 0.0)) -> np.ndarray:
    """(participants, 2) overall SHS, every participant rating the same two systems."""
    draws = EffectDraws(np.random.default_rng(seed), PARTICIPANTS, effects=effects)
    answers = np.array([draws.answers(number, offsets) for number in range(PARTICIPANTS)])
    return score_array(answers.reshape(-1, 10)).shs.reshape(PARTICIPANTS, 2)


@pytest.mark.parametrize("icc", [DEFAULT_PARTICIPANT_ICC, 0.6])
def test_a_participants_two_scores_correlate_at_the_configured_icc(icc):
    scores = _study(AnswerEffects(participant_icc=icc, system_difference=0), seed=11)

    assert _one_way_icc(scores[:, 0], scores[:, 1]) == pytest.approx(icc, abs=0.025)


def test_without_effects_a_participants_two_scores_do_not_correlate():
    scores = _study(NO_EFFECTS, seed=12)

    # 4 SE of r at n = 20,000.
    assert abs(np.corrcoef(scores[:, 0], scores[:, 1])[0, 1]) < 0.03
    assert abs(_one_way_icc(scores[:, 0], scores[:, 1])) < 0.03


@pytest.mark.parametrize("difference", [DEFAULT_SYSTEM_DIFFERENCE, -0.5])
def test_the_two_systems_means_differ_by_the_configured_sds(difference):
    effects = AnswerEffects(participant_icc=DEFAULT_PARTICIPANT_ICC, system_difference=difference)
    # Two systems: the first at -shift/2, the second at +shift/2.
    offsets = tuple(system_offsets(2, factor_shift(CALIBRATED, difference)))
    scores = _study(effects, seed=13, offsets=offsets)

    d = _cohens_d(scores[:, 0], scores[:, 1])
    assert np.sign(d) == np.sign(difference)
    # SE of d from 20,000 paired ratings, their correlation left in: about .01.
    assert d == pytest.approx(difference, abs=0.03)


def test_without_a_system_effect_two_systems_are_rated_alike():
    scores = _study(NO_EFFECTS, seed=14, offsets=tuple(system_offsets(2, 0.0)))

    assert abs(_cohens_d(scores[:, 0], scores[:, 1])) < 0.03


def test_the_effects_keep_the_papers_dimension_profile():
    scores = _study(AnswerEffects(), seed=15)
    draws = EffectDraws(np.random.default_rng(15), PARTICIPANTS)
    answers = np.array([draws.answers(n) for n in range(PARTICIPANTS)]).reshape(-1, 10)
    dimensions = dimension_scores(answers)

    # Within a system the calibrated distribution holds: section 7.3's means and SDs.
    np.testing.assert_allclose(dimensions.mean(axis=0), DIMENSION_MEANS, atol=0.01)
    np.testing.assert_allclose(dimensions.std(axis=0, ddof=1), DIMENSION_SDS, atol=0.01)
    assert scores.shape == (PARTICIPANTS, 2)


def test_more_systems_are_spread_evenly_between_the_first_and_the_last():
    np.testing.assert_allclose(system_offsets(5, 0.4), [-0.2, -0.1, 0.0, 0.1, 0.2])
    np.testing.assert_allclose(system_offsets(1, 0.4), [0.0])


@pytest.mark.parametrize(
    "effects", [{"participant_icc": -0.1}, {"participant_icc": 1.0}, {"system_difference": 3}]
)
def test_effects_out_of_range_are_refused(effects):
    with pytest.raises(AnswerEffectsError):
        AnswerEffects(**effects)


# -- the command ------------------------------------------------------------------


def _stored_and_expected(study, participants: int, seed: int, effects: AnswerEffects):
    """The stored answers and the model's for the systems each session was given."""
    systems = list(LLMSystem.objects.filter(study=study, active=True).order_by("pk"))
    shift = factor_shift(CALIBRATED, effects.system_difference)
    offsets = dict(zip([s.pk for s in systems], system_offsets(len(systems), shift), strict=True))
    draws = EffectDraws(np.random.default_rng(seed), participants, effects=effects)
    evaluations = Evaluation.objects.filter(session__study=study).order_by("session_id", "block")
    stored, expected = [], []
    for number, session in enumerate(sorted({e.session for e in evaluations}, key=lambda s: s.pk)):
        pair = (offsets[session.first_system_id], offsets[session.second_system_id])
        expected += draws.answers(number, pair).tolist()
        stored += [list(e.answers.values()) for e in evaluations.filter(session=session)]
    return stored, expected


@pytest.mark.parametrize(
    ("options", "effects"),
    [
        ((), AnswerEffects()),
        (
            ("--participant-icc", "0.6", "--system-difference", "-0.4"),
            AnswerEffects(participant_icc=0.6, system_difference=-0.4),
        ),
    ],
)
def test_simulate_study_stores_the_models_answers_with_its_effects(
    study_a, personas, options, effects
):
    out = io.StringIO()
    call_command(
        "simulate_study", study_a.slug, "--participants", "4", "--seed", "9", *options, stdout=out
    )

    stored, expected = _stored_and_expected(study_a, 4, 9, effects)
    assert stored == expected
    assert f"participant ICC of {effects.participant_icc:.2f}" in out.getvalue()


def test_an_icc_the_model_cannot_reach_is_refused_before_any_session(study_a, personas):
    with pytest.raises(CommandError, match="beyond what the answer model can show"):
        call_command(
            "simulate_study", study_a.slug, "--participants", "2", "--participant-icc", "0.99"
        )
    assert not Evaluation.objects.filter(session__study=study_a).exists()
