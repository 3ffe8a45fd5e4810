"""simulate_study: bots through the real protocol, with realistic answers."""

from collections import Counter

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from scoring.instruments.shs import ITEM_KEYS
from surveys.answer_model import (
    CALIBRATED,
    DIMENSION_MEANS,
    DIMENSION_R,
    DIMENSION_SDS,
    NEGATIVE_ITEM_AGREEMENT,
    OBTAINED_ALPHA,
    PAIRED_R,
    SHS_MINUTES,
    calibrate,
    dimension_scores,
    paired_r,
    shs_minutes,
)
from surveys.models import Evaluation, InteractionBlock, Study, StudyMembership, StudySession
from surveys.steps import Step
from tests.personas import make_user

PARTICIPANTS = 193  # the paper's study: 386 evaluations
EVALUATIONS = 2 * PARTICIPANTS
TABLE6 = np.array(DIMENSION_R)[np.triu_indices(5, 1)]


def _alpha(answers: np.ndarray) -> float:
    """Cronbach's alpha over reverse-scored items, written out by hand."""
    items = answers.astype(float).copy()
    items[:, 1::2] *= -1
    k = items.shape[1]
    item_variances = sum(np.var(items[:, j], ddof=1) for j in range(k))
    total_variance = np.var(items.sum(axis=1), ddof=1)
    return k / (k - 1) * (1 - item_variances / total_variance)


def _fisher_gap(observed: np.ndarray, target: np.ndarray, n: int) -> np.ndarray:
    """|z(observed) - z(target)| in standard errors of Fisher's z (1/sqrt(n - 3))."""
    return np.abs(np.arctanh(observed) - np.arctanh(target)) * np.sqrt(n - 3)


def _figures(answers: np.ndarray) -> dict[str, np.ndarray]:
    scores = dimension_scores(answers)
    return {
        "means": scores.mean(axis=0),
        "sds": scores.std(axis=0, ddof=1),
        "paired": paired_r(answers),
        "table6": np.corrcoef(scores.T)[np.triu_indices(5, 1)],
    }


def test_the_calibrated_model_has_the_papers_structure():
    # 200,000 evaluations: sampling error is negligible (SE of r < .002), so
    # what is left is the calibration's own error.
    answers = CALIBRATED.answers(np.random.default_rng(11), 200_000)

    figures = _figures(answers)
    assert answers.min() >= -2 and answers.max() <= 2
    np.testing.assert_allclose(figures["means"], DIMENSION_MEANS, atol=0.01)
    np.testing.assert_allclose(figures["sds"], DIMENSION_SDS, atol=0.01)
    np.testing.assert_allclose(figures["paired"], PAIRED_R, atol=0.01)
    np.testing.assert_allclose(figures["table6"], TABLE6, atol=0.01)
    for item, rate in NEGATIVE_ITEM_AGREEMENT.items():
        assert (answers[:, ITEM_KEYS.index(item)] >= 1).mean() == pytest.approx(rate, abs=0.01)
    # The correlations imply a higher alpha than the reported .87 (module docstring).
    assert _alpha(answers) == pytest.approx(OBTAINED_ALPHA, abs=0.005)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_simulated_study_of_193_participants_matches_the_paper_within_sampling_error(seed):
    # The 386 evaluations simulate_study draws for this seed (a test below checks
    # that these are the answers it stores). Tolerances are 3 standard errors at
    # N = 386: means SD/sqrt(N) (~.02), SDs SD/sqrt(2(N-1)) (~.015) and
    # correlations on Fisher's z scale, 1/sqrt(N-3) (~.05); a model that misses a
    # target by more than that fails for almost every seed.
    answers = CALIBRATED.answers(np.random.default_rng(seed), EVALUATIONS)

    figures = _figures(answers)
    means_se = np.array(DIMENSION_SDS) / np.sqrt(EVALUATIONS)
    sds_se = np.array(DIMENSION_SDS) / np.sqrt(2 * (EVALUATIONS - 1))
    assert np.all(np.abs(figures["means"] - DIMENSION_MEANS) <= 3 * means_se)
    assert np.all(np.abs(figures["sds"] - DIMENSION_SDS) <= 3 * sds_se)
    assert np.all(_fisher_gap(figures["paired"], np.array(PAIRED_R), EVALUATIONS) <= 3)
    assert np.all(_fisher_gap(figures["table6"], TABLE6, EVALUATIONS) <= 3)


def test_shs_completion_times_are_the_papers():
    rng = np.random.default_rng(5)
    minutes = np.array([shs_minutes(rng) for _ in range(EVALUATIONS)])

    # 3 SE of the mean (1.8 / sqrt(386) = .09 min); the SD of a skewed sample
    # varies more than a normal one's (SE ~.1 here), hence .3 for both.
    assert minutes.min() > 0
    assert minutes.mean() == pytest.approx(SHS_MINUTES[0], abs=0.3)
    assert minutes.std(ddof=1) == pytest.approx(SHS_MINUTES[1], abs=0.3)


def test_calibration_solves_the_parameters_from_the_papers_figures():
    # A coarse run (fewer draws and steps) lands near the stored parameters:
    # they are what the targets imply, not numbers typed in by hand.
    solved = calibrate(draws=20_000, iterations=30, seed=4)

    np.testing.assert_allclose(solved.loadings, CALIBRATED.loadings, atol=0.03)
    np.testing.assert_allclose(solved.scales, CALIBRATED.scales, atol=0.05)
    np.testing.assert_allclose(solved.locations, CALIBRATED.locations, atol=0.1)
    np.testing.assert_allclose(solved.factor_r, CALIBRATED.factor_r, atol=0.05)


def test_simulate_study_runs_participants_through_every_step(
    study_a, personas, capsys, django_capture_on_commit_callbacks
):
    second = make_user("exp-a2@example.org")
    StudyMembership.objects.create(user=second, study=study_a, role="experimenter")

    # Scoring is queued on commit; the test's transaction never commits, so run
    # the callbacks as the real commits of the command would.
    with django_capture_on_commit_callbacks(execute=True):
        # No participant or system effect: the answers are the calibrated model's own.
        call_command(
            "simulate_study", study_a.slug, "--participants", "12", "--seed", "3",
            "--participant-icc", "0", "--system-difference", "0",
        )  # fmt: skip

    sessions = StudySession.objects.filter(study=study_a)
    assert sessions.count() == 12
    assert set(sessions.values_list("step", flat=True)) == {Step.COMPLETE}
    by_experimenter = Counter(sessions.values_list("experimenter__email", flat=True))
    assert by_experimenter == {"exp-a@example.org": 6, "exp-a2@example.org": 6}
    evaluations = Evaluation.objects.filter(session__study=study_a)
    assert evaluations.filter(scored_at__isnull=False).count() == 24
    uses = Counter(evaluations.values_list("system_id", flat=True))
    assert max(uses.values()) - min(uses.values()) <= 1
    output = capsys.readouterr().out
    assert "Created 12 sessions and 24 evaluations" in output
    for session in sessions:
        assert session.feedback.experimenter.email == session.experimenter.email
        assert session.blocks.get(block=1).prompts.filter(category="verified").count() >= 3
    # The answers stored are the model's draws for this seed, in session order.
    stored = [list(e.answers.values()) for e in evaluations.order_by("session_id", "block")]
    assert stored == CALIBRATED.answers(np.random.default_rng(3), 24).tolist()


def test_simulated_sessions_take_the_time_of_the_papers_sessions(study_a, personas):
    before = timezone.now()
    call_command("simulate_study", study_a.slug, "--participants", "6", "--seed", "2")

    evaluations = Evaluation.objects.filter(session__study=study_a)
    minutes = np.array([evaluation.shs_seconds / 60 for evaluation in evaluations])
    # Twelve log-normal draws with mean 4.2 and SD 1.8: all plausible, none instant.
    assert minutes.min() > 0.5 and minutes.max() < 20
    assert 2.5 < minutes.mean() < 6
    for block in InteractionBlock.objects.filter(session__study=study_a):
        assert 5 * 60 < (block.ended_at - block.started_at).total_seconds() < 30 * 60
    # Every session is over before the command ran: none lies in the future.
    assert StudySession.objects.filter(study=study_a, ended_at__lte=before).count() == 6


def test_simulate_study_accepts_the_study_id(study_a, personas, capsys):
    call_command("simulate_study", str(study_a.pk), "--participants", "1")
    assert "Created 1 sessions and 2 evaluations" in capsys.readouterr().out


def test_simulate_study_refuses_an_unknown_study(db):
    with pytest.raises(CommandError, match="no study"):
        call_command("simulate_study", "nope", "--participants", "1")


def test_bots_run_a_naturalistic_study_through_every_step(study_a, personas):
    Study.objects.filter(pk=study_a.pk).update(protocol=Study.Protocol.NATURALISTIC, min_minutes=20)

    call_command("simulate_study", study_a.slug, "--participants", "2", "--seed", "4")

    sessions = StudySession.objects.filter(study=study_a)
    assert {session.step for session in sessions} == {Step.COMPLETE}
    blocks = InteractionBlock.objects.filter(session__study=study_a)
    assert all((b.ended_at - b.started_at).total_seconds() >= 20 * 60 for b in blocks)
    assert set(
        Evaluation.objects.filter(session__study=study_a).values_list("protocol", flat=True)
    ) == {"naturalistic"}
