"""simulate_study --latent and its validation options (docs/design/validation-analysis.md §14.9):
the latent model's answers go through the real protocol over HTTP, for the
systems the platform allocated, in the languages asked for."""

from collections import Counter

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from surveys.models import Evaluation, RetestEvaluation, StudySession
from surveys.steps import Step
from validation.dataset import validation_data
from validation.simulation.latent import LatentStudy, to_validation_data
from validation.simulation.study import DEFAULT_RETEST_DAYS, RETEST_SHARE


def _stored(study):
    evaluations = Evaluation.objects.filter(session__study=study).order_by("session_id", "block")
    return np.array([list(e.answers.values()) for e in evaluations])


def _sessions(study):
    return list(
        StudySession.objects.filter(study=study)
        .select_related("first_system", "second_system")
        .order_by("pk")
    )


def _expected(sessions, latent: LatentStudy) -> np.ndarray:
    """The pure generator's draws for the systems the platform allocated,
    shifted to the form's -2..+2: what the bots should have posted."""
    systems = [[s.first_system.name, s.second_system.name] for s in sessions]
    return latent.sample(np.array(systems)).answers - 3


def test_latent_answers_reach_the_study_for_the_allocated_systems(study_a, personas, capsys):
    call_command(
        "simulate_study", study_a.slug, "--participants", "6", "--seed", "3", "--languages", "en,de"
    )

    sessions = _sessions(study_a)
    assert {session.step for session in sessions} == {Step.COMPLETE}
    assert Counter(session.language for session in sessions) == {"en": 3, "de": 3}
    latent = LatentStudy(6, seed=3, languages=("en", "de"), scales=())
    assert np.array_equal(_stored(study_a), _expected(sessions, latent))
    assert [s.language for s in sessions] == list(latent.languages)
    assert "Created 6 sessions and 12 evaluations" in capsys.readouterr().out


def test_the_latent_answers_do_not_depend_on_the_wall_clock(study_a, personas, time_machine):
    time_machine.move_to("2031-05-04 10:00:00+00:00", tick=False)
    call_command("simulate_study", study_a.slug, "--participants", "3", "--latent")

    sessions = _sessions(study_a)
    assert all(s.ended_at.year == 2031 for s in sessions)
    latent = LatentStudy(3, seed=0, languages=("en", "de", "fr"), scales=())
    assert np.array_equal(_stored(study_a), _expected(sessions, latent))


def test_options_the_study_cannot_run_are_refused_before_any_session(study_a, personas):
    with pytest.raises(CommandError, match="does not offer it \\(it offers en, de, fr\\)"):
        call_command("simulate_study", study_a.slug, "--participants", "1", "--languages", "en,it")
    with pytest.raises(CommandError, match="no companion scale nps"):
        call_command("simulate_study", study_a.slug, "--participants", "1", "--companions", "nps")
    assert not StudySession.objects.filter(study=study_a).exists()
    study_a.refresh_from_db()
    assert study_a.companion_scales == [] and study_a.retest_after_days is None


def test_companion_scales_of_a_study_with_sessions_stay_as_they_are(study_a, personas):
    call_command("simulate_study", study_a.slug, "--participants", "1", "--latent")
    with pytest.raises(CommandError, match="sessions already"):
        call_command("simulate_study", study_a.slug, "--participants", "1", "--companions", "sus")
    study_a.refresh_from_db()
    assert study_a.companion_scales == []


def test_the_retest_wave_runs_on_the_simulations_clock(study_a, personas):
    before = timezone.now()
    call_command("simulate_study", study_a.slug, "--participants", "10", "--seed", "5", "--retest")

    study_a.refresh_from_db()
    assert study_a.retest_after_days == DEFAULT_RETEST_DAYS
    sessions = _sessions(study_a)
    latent = LatentStudy(
        10, seed=5, languages=("en", "de", "fr"), scales=(), retest_share=RETEST_SHARE
    )
    whole = latent.sample(np.array([[s.first_system.name, s.second_system.name] for s in sessions]))
    retests = RetestEvaluation.objects.filter(retest__session__study=study_a).select_related(
        "retest__session"
    )
    assert retests.count() == 2 * round(RETEST_SHARE * 10) == len(whole.retest_rows)
    order = {session.pk: number for number, session in enumerate(sessions)}
    stored = sorted(retests, key=lambda e: (order[e.retest.session_id], e.block))
    given = np.array([list(evaluation.answers.values()) for evaluation in stored])
    assert np.array_equal(given, whole.retest_answers - 3)
    for evaluation, days in zip(stored, whole.retest_days, strict=True):
        first = Evaluation.objects.get(session=evaluation.retest.session, block=evaluation.block)
        waited = (evaluation.submitted_at - first.submitted_at).total_seconds() / 86_400
        assert days - 0.1 < waited < days + 0.2  # the days drawn, plus the session's rest
        assert evaluation.retest.completed_at < before  # due, and in the past


def test_a_simulated_validation_study_reaches_the_analyses_as_drawn(study_a, personas, capsys):
    """The issue's study: three languages, SUS, SCS and trust after each SHS, a
    retest wave, all through the protocol; what the report's analyses read
    (validation.dataset) is what the pure generator drew for the systems the
    platform allocated."""
    call_command(
        "simulate_study",
        study_a.slug,
        "--participants",
        "9",
        "--seed",
        "6",
        "--languages",
        "en,de,fr",
        "--companions",
        "sus,scs,trust",
        "--retest",
    )

    study_a.refresh_from_db()
    assert study_a.companion_scales == ["sus", "scs", "trust"]
    assert "no published wording in de, fr" in capsys.readouterr().out
    sessions = _sessions(study_a)
    latent = LatentStudy(
        9,
        seed=6,
        languages=("en", "de", "fr"),
        scales=("sus", "scs", "trust"),
        retest_share=RETEST_SHARE,
    )
    systems = np.array([[s.first_system.name, s.second_system.name] for s in sessions])
    expected = to_validation_data(latent.sample(systems))
    found = validation_data(study_a, timezone.now())
    assert np.array_equal(found.answers, expected.answers)
    assert list(found.language) == list(expected.language)
    assert list(found.system) == list(expected.system)
    for key in ("sus", "scs", "trust"):
        assert np.array_equal(found.companion_items[key], expected.companion_items[key])
        assert np.allclose(found.companion_scores[key], expected.companion_scores[key])
    assert np.array_equal(found.retest.first, expected.retest.first)
    assert np.array_equal(found.retest.second, expected.retest.second)
    assert np.all(np.abs(found.retest.days - expected.retest.days) < 0.2)
