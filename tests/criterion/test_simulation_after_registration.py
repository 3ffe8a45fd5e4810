"""A simulated study follows its pre-registration (docs/design/criterion.md §13.1, §13.5):
register, then simulate, and the report says the registration came before data
collection, with the frozen version and the flags telling the same story."""

import io
import json
from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from criterion.models import PreRegistration
from criterion.preregistration.services import plan_for_report, save_version
from surveys.models import StudySession
from surveys.protocol.flow import session_start
from surveys.simulation import SimulationError, simulate_study


def _criterion_report(study, tmp_path) -> dict:
    out = tmp_path / "criterion.json"
    call_command("shs_criterion", study.slug, "-o", str(out), stdout=io.StringIO())
    return json.loads(out.read_text(encoding="utf-8"))


def test_a_registration_written_before_the_simulation_is_before_data_collection(
    study_a, personas, tmp_path
):
    # The README's walk-through: register, then simulate at once. Six
    # participants need 8.75 hours at the paper's pace; the registration is a
    # minute old.
    with time_machine.travel(timezone.now() - timedelta(minutes=1), tick=False):
        registration = save_version(study_a, {}, personas["coordinator_a"])
    out = io.StringIO()

    call_command("simulate_study", study_a.slug, "--participants", "6", "--seed", "2", stdout=out)

    sessions = StudySession.objects.filter(study=study_a)
    assert sessions.count() == 6
    starts = sorted(sessions.values_list("created_at", flat=True))
    assert starts[0] > registration.created_at
    assert max(sessions.values_list("ended_at", flat=True)) <= timezone.now()
    assert "fitted into the time since it" in out.getvalue()

    pre = _criterion_report(study_a, tmp_path)["preregistration"]
    assert pre["registered_before_data_collection"] is True
    assert pre["followed"]["after_data_collection"] is False
    assert pre["frozen"]["version"] == registration.version
    assert pre["frozen"]["frozen_at"] == starts[0].isoformat()
    assert pre["data_collection_began"] is True


def test_a_registration_long_before_leaves_the_papers_pace(study_a, personas):
    with time_machine.travel(timezone.now() - timedelta(days=30), tick=False):
        registration = save_version(study_a, {}, personas["coordinator_a"])
    until = timezone.now()

    result = simulate_study(
        study=study_a, participants=3, seed=1, until=until, not_before=registration.created_at
    )

    assert result.pace == 1.0
    # Back to back, one 75-minute slot each, ending before `until` as without a registration.
    assert result.first_start == until - timedelta(minutes=75) * 4


def test_a_registration_after_the_end_refuses_and_runs_nothing(study_a, personas):
    registration = save_version(study_a, {}, personas["coordinator_a"])

    with pytest.raises(SimulationError, match="pre-registration was saved at"):
        simulate_study(
            study=study_a,
            participants=2,
            seed=1,
            until=registration.created_at - timedelta(hours=1),
            not_before=registration.created_at,
        )
    assert not StudySession.objects.filter(study=study_a).exists()


def test_the_command_refuses_a_registration_too_recent_for_a_retest_wave(study_a, personas):
    save_version(study_a, {}, personas["coordinator_a"])

    with pytest.raises(CommandError, match="too recently"):
        call_command(
            "simulate_study", study_a.slug, "--participants", "2", "--retest",
            stdout=io.StringIO(),
        )  # fmt: skip
    assert not StudySession.objects.filter(study=study_a).exists()


def test_a_session_dated_before_a_version_saved_first_cannot_make_the_flags_disagree(
    study_a, personas
):
    # A pilot runs, the plan is registered, then the coordinator counts the pilot:
    # the first counted session now starts before the version it was saved after.
    pilot = session_start(
        study=study_a, experimenter=personas["coordinator_a"], language="en", is_pilot=True
    )
    version = save_version(study_a, {}, personas["coordinator_a"])
    assert not version.after_data_collection
    StudySession.objects.filter(pk=pilot.pk).update(is_pilot=False)

    plan = plan_for_report(study_a)

    assert plan["followed"]["after_data_collection"] is False
    assert plan["registered_before_data_collection"] is True
    assert plan["frozen"]["version"] == version.version
    assert PreRegistration.objects.get(pk=version.pk).frozen_at == pilot.created_at


def test_before_data_collection_a_registration_is_before_it_and_not_frozen(study_a, personas):
    save_version(study_a, {}, personas["coordinator_a"])

    plan = plan_for_report(study_a)

    assert plan["registered_before_data_collection"] is True
    assert plan["frozen"] is None and not plan["data_collection_began"]
