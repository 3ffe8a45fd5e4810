"""simulate_study: bots through the real protocol, with realistic answers."""

from collections import Counter

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from surveys.models import Evaluation, StudyMembership, StudySession
from surveys.simulation import AnswerModel
from surveys.steps import Step
from tests.personas import make_user


def _alpha(answers: np.ndarray) -> float:
    """Cronbach's alpha over reverse-scored items, written out by hand."""
    items = answers.astype(float).copy()
    items[:, 1::2] *= -1
    k = items.shape[1]
    item_variances = sum(np.var(items[:, j], ddof=1) for j in range(k))
    total_variance = np.var(items.sum(axis=1), ddof=1)
    return k / (k - 1) * (1 - item_variances / total_variance)


def test_latent_trait_answers_look_like_real_data():
    rng = np.random.default_rng(7)
    model = AnswerModel()
    rows = np.array([list(model.answers(rng, 0.0).values()) for _ in range(3000)])

    assert rows.min() >= -2 and rows.max() <= 2
    assert 0.80 <= _alpha(rows) <= 0.90
    scores = (rows[:, 0::2] - rows[:, 1::2]) / 4
    means = dict(zip(["FA", "SR", "LC", "DP", "RG"], scores.mean(axis=0), strict=True))
    assert means["DP"] < means["SR"] < means["FA"]  # the paper's profile shape


def test_simulate_study_runs_participants_through_every_step(
    study_a, personas, capsys, django_capture_on_commit_callbacks
):
    second = make_user("exp-a2@example.org")
    StudyMembership.objects.create(user=second, study=study_a, role="experimenter")

    # Scoring is queued on commit; the test's transaction never commits, so run
    # the callbacks as the real commits of the command would.
    with django_capture_on_commit_callbacks(execute=True):
        call_command("simulate_study", study_a.slug, "--participants", "12", "--seed", "3")

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


def test_simulate_study_accepts_the_study_id(study_a, personas, capsys):
    call_command("simulate_study", str(study_a.pk), "--participants", "1")
    assert "Created 1 sessions and 2 evaluations" in capsys.readouterr().out


def test_simulate_study_refuses_an_unknown_study(db):
    with pytest.raises(CommandError, match="no study"):
        call_command("simulate_study", "nope", "--participants", "1")
