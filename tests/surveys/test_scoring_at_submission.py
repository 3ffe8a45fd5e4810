"""A submission is scored in its own transaction; a scoring failure loses nothing."""

import logging

import pytest

from surveys.models import Evaluation
from surveys.scores import evaluations_score_pending
from tests.surveys.runner import SessionRun, answers

pytestmark = pytest.mark.django_db


def test_the_submission_is_scored_with_its_answers(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block1_shs")
    assert run.shs(1, answers(2, -2, 1, -1, 0, 0, 1, -2, 2, -1)).status_code == 302

    # By hand (docs/design/instrument.md §2.3, pairs q1/q2 .. q9/q10): T = 4 + 2 + 0 + 3 + 3
    # = 12, shs = T / 20, shs100 = 2.5 (T + 20); no pair has |a + b| >= 2.
    # Scored in the submission's transaction: no task was queued or run.
    evaluation = Evaluation.objects.get(session=run.session, block=1)
    assert evaluation.scored_at is not None
    assert (evaluation.shs, evaluation.shs100, evaluation.band) == (0.6, 80.0, "high")
    assert evaluation.s_FA == 1.0
    assert evaluation.flagged_pairs == ""


def test_a_scoring_failure_keeps_the_submission_for_the_sweep(
    study_a, client_for, monkeypatch, caplog
):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block1_shs")

    def broken(_answers):
        raise ArithmeticError("scoring broke")

    monkeypatch.setattr("surveys.scores.score_answers", broken)
    with caplog.at_level(logging.ERROR, logger="surveys.scores"):
        response = run.shs(1, answers(2, 2, 2, 2, 2, -2, -2, -2, -2, -2))

    assert response.status_code == 302
    assert run.session.step == "block2_interaction"
    evaluation = Evaluation.objects.get(session=run.session, block=1)
    assert evaluation.is_submitted and evaluation.scored_at is None
    assert evaluation.answers["q1"] == 2 and evaluation.answers["q10"] == -2
    assert "the sweep will" in caplog.text

    monkeypatch.undo()
    assert evaluations_score_pending() == 1
    evaluation.refresh_from_db()
    assert evaluation.scored_at is not None
