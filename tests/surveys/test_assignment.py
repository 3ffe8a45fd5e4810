"""Allocation of two systems per participant (docs/design/protocol.md §5, paper 6.2)."""

import itertools
from collections import Counter

import pytest

from surveys.assignment import AllocationImpossible, allocate_systems
from surveys.models import StudySession
from surveys.protocol.curation import session_withdraw
from surveys.protocol.flow import session_start
from surveys.steps import Step
from tests.personas import make_study


def _start(study, experimenter, n):
    return [session_start(study=study, experimenter=experimenter, language="en") for _ in range(n)]


def _figures(study):
    uses, firsts, seconds, pairs = Counter(), Counter(), Counter(), Counter()
    for first, second in study.sessions.holding_allocation().values_list(
        "first_system__name", "second_system__name"
    ):
        uses.update([first, second])
        firsts[first] += 1
        seconds[second] += 1
        pairs[frozenset((first, second))] += 1
    return uses, firsts, seconds, pairs


def test_193_participants_give_balanced_counts_pairs_and_positions(study_a, personas):
    _start(study_a, personas["experimenter_a"], 193)

    uses, firsts, seconds, pairs = _figures(study_a)

    assert sum(uses.values()) == 386
    assert max(uses.values()) - min(uses.values()) <= 1
    all_pairs = [frozenset(p) for p in itertools.combinations(uses, 2)]
    pair_counts = [pairs[p] for p in all_pairs]
    assert max(pair_counts) - min(pair_counts) <= 1  # 10 pairs, 193 sessions: 19 or 20 each
    for name in uses:
        assert abs(firsts[name] - seconds[name]) <= 2


def test_each_participant_gets_two_distinct_active_systems(study_a, personas):
    retired = study_a.systems.first()
    retired.active = False
    retired.save()
    sessions = _start(study_a, personas["experimenter_a"], 20)
    for session in sessions:
        assert session.first_system != session.second_system
        assert retired not in (session.first_system, session.second_system)


def test_allocation_is_reproducible_from_the_study_seed(personas):
    one, two = make_study("seed-one"), make_study("seed-two")
    for study in (one, two):
        study.random_seed = 2026
        study.save()
        _start(study, personas["experimenter_a"], 30)
    sequence = [
        [(s.first_system.name[-1], s.second_system.name[-1]) for s in study.sessions.order_by("pk")]
        for study in (one, two)
    ]
    assert sequence[0] == sequence[1]


def test_a_different_seed_gives_a_different_sequence(personas):
    one, two = make_study("seed-a"), make_study("seed-b")
    one.random_seed, two.random_seed = 1, 2
    one.save()
    two.save()
    for study in (one, two):
        _start(study, personas["experimenter_a"], 30)
    sequences = [
        [(s.first_system.name[-1], s.second_system.name[-1]) for s in study.sessions.order_by("pk")]
        for study in (one, two)
    ]
    assert sequences[0] != sequences[1]


def test_withdrawn_ineligible_and_abandoned_sessions_free_their_slot(study_a, personas):
    sessions = _start(study_a, personas["experimenter_a"], 10)
    freed = sessions[:3]
    session_withdraw(session_id=freed[0].pk)
    StudySession.objects.filter(pk=freed[1].pk).update(step=Step.INELIGIBLE)
    StudySession.objects.filter(pk=freed[2].pk).update(step=Step.ABANDONED)

    uses, *_ = _figures(study_a)
    assert sum(uses.values()) == 14
    _start(study_a, personas["experimenter_a"], 3)
    uses, *_ = _figures(study_a)
    assert sum(uses.values()) == 20
    assert max(uses.values()) - min(uses.values()) <= 1


def test_pilot_sessions_do_not_take_slots(study_a, personas):
    session_start(
        study=study_a, experimenter=personas["experimenter_a"], language="en", is_pilot=True
    )
    uses, *_ = _figures(study_a)
    assert sum(uses.values()) == 0


def test_fewer_than_two_active_systems_is_refused(study_a, personas):
    study_a.systems.exclude(pk=study_a.systems.first().pk).update(active=False)
    with pytest.raises(AllocationImpossible):
        allocate_systems(study=study_a)
    assert not study_a.sessions.exists()
