"""Allocation of two systems to each participant (docs/design/protocol.md §5, paper 6.2).

Each new session gets two distinct active systems, in an order, such that
  1. per-system counts stay within 1 of each other (the two least-used
     systems are always chosen),
  2. among equally used systems, the pair used least so far is preferred,
  3. the system that has been first more often than second goes second.
Only sessions that are in progress or complete (and not pilot) hold their
systems: withdrawn, ineligible and abandoned sessions free their slot.

With a quota per system (docs/design/remote.md §11.7), a pair is chosen only if at
least one of its systems has fewer places taken than the quota; when none
has, the study is full (`QuotaFull`). A remote session idle beyond the study's
hold takes no place but still counts for the balance (`surveys.quotas`).

Ties are broken by a random generator seeded from the study's seed and the
allocation number, so a study's sequence of allocations is reproducible.
The caller must hold a lock on the study row (see session_start) so that
concurrent starts see each other's allocations.
"""

import random
from collections import Counter
from dataclasses import dataclass
from itertools import combinations

from surveys.models import LLMSystem, Study
from surveys.quotas import places_taken


class AllocationImpossible(Exception):
    """The study has fewer than two active systems."""


class QuotaFull(AllocationImpossible):
    """Every active system has reached the study's quota."""


@dataclass(frozen=True)
class Allocation:
    first: LLMSystem
    second: LLMSystem
    number: int


def allocate_systems(*, study: Study, respect_quota: bool = True) -> Allocation:
    systems = list(study.systems.filter(active=True).order_by("pk"))
    if len(systems) < 2:
        raise AllocationImpossible
    held = study.sessions.holding_allocation().values_list("first_system_id", "second_system_id")
    uses, firsts, seconds = Counter[int](), Counter[int](), Counter[int]()
    pairs = Counter[frozenset[int]]()
    for first_id, second_id in held:
        uses[first_id] += 1
        uses[second_id] += 1
        firsts[first_id] += 1
        seconds[second_id] += 1
        pairs[frozenset((first_id, second_id))] += 1

    number = study.sessions.count() + 1
    rng = random.Random(f"{study.random_seed}:{number}")
    candidates = list(combinations(systems, 2))
    rng.shuffle(candidates)  # the random part: which of several equal pairs wins
    quota = study.quota_per_system if respect_quota else None
    if quota:
        # One open system is enough: with an odd count of places the last
        # session pairs it with a full one, rather than leaving it short.
        places = places_taken(study)
        candidates = [p for p in candidates if min(places[p[0].pk], places[p[1].pk]) < quota]
        if not candidates:
            raise QuotaFull
    a, b = min(
        candidates,
        key=lambda pair: (
            uses[pair[0].pk] + uses[pair[1].pk],
            max(uses[pair[0].pk], uses[pair[1].pk]),
            pairs[frozenset((pair[0].pk, pair[1].pk))],
        ),
    )
    lead_a = firsts[a.pk] - seconds[a.pk]
    lead_b = firsts[b.pk] - seconds[b.pk]
    if lead_a > lead_b or (lead_a == lead_b and rng.random() < 0.5):
        a, b = b, a
    return Allocation(first=a, second=b, number=number)
