"""Quotas per system of a study (docs/design/remote.md §11.7): how many completed,
running and idle sessions each system holds against the target, and whether the
study is full. The allocation applies the quota (`surveys.assignment`) with the
places counted here (`places_taken`), under the study's row lock.

A remote session that has been idle longer than the study's hold
(`Study.remote_hold_minutes`) no longer takes a place: a panel link opened and
left must not make the study look full until the inactivity timeout marks the
session abandoned. It keeps its systems for the balance of the allocation and
may still finish.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Q
from django.utils import timezone

from surveys.models import Study, StudySession
from surveys.steps import Step


@dataclass(frozen=True)
class SystemQuota:
    name: str
    completed: int
    running: int
    target: int
    # Remote sessions idle beyond the hold: counted apart, they take no place.
    idle: int = 0

    @property
    def is_open(self) -> bool:
        """Still assigned: completed and running sessions stay below the target."""
        return self.completed + self.running < self.target


@dataclass(frozen=True)
class QuotaState:
    systems: list[SystemQuota]

    @property
    def is_open(self) -> bool:
        """New sessions can start: some system still has a place."""
        return any(system.is_open for system in self.systems)

    @property
    def is_reached(self) -> bool:
        """Every system has its target of completed sessions."""
        return all(system.completed >= system.target for system in self.systems)


def idle_remote(study: Study, now: datetime | None = None) -> Q:
    """Unfinished remote sessions without activity for longer than the study's hold."""
    since = (now or timezone.now()) - timedelta(minutes=study.remote_hold_minutes)
    return Q(remote=True, last_activity_at__lte=since) & ~Q(step=Step.COMPLETE)


def places_taken(study: Study, now: datetime | None = None) -> Counter[int]:
    """System id -> sessions taking one of its places (completed, or running and
    not idle). One query; the caller holds the study's row lock when it
    allocates, so that two starts never both take the last place."""
    held = StudySession.objects.filter(study=study).holding_allocation()
    taking = held.exclude(idle_remote(study, now))
    places = Counter[int]()
    for pair in taking.values_list("first_system_id", "second_system_id"):
        places.update(pair)
    return places


def quota_state(study: Study, now: datetime | None = None) -> QuotaState | None:
    """The quota of each active system (three queries), or None without a quota."""
    if not study.quota_per_system:
        return None
    held = StudySession.objects.filter(study=study).holding_allocation()
    idle = idle_remote(study, now)
    kinds = {
        "completed": Q(step=Step.COMPLETE),
        "running": ~Q(step=Step.COMPLETE) & ~idle,
        "idle": idle,
    }
    counts: dict[int, Counter[str]] = {}  # system id -> kind -> sessions
    for position in ("first_system", "second_system"):
        rows = held.values(position).annotate(
            **{kind: Count("pk", filter=where) for kind, where in kinds.items()}
        )
        for row in rows:
            counts.setdefault(row[position], Counter()).update({kind: row[kind] for kind in kinds})
    systems = study.systems.filter(active=True).order_by("pk")
    return QuotaState(
        systems=[
            SystemQuota(
                name=system.name,
                completed=counts.get(system.pk, Counter())["completed"],
                running=counts.get(system.pk, Counter())["running"],
                idle=counts.get(system.pk, Counter())["idle"],
                target=study.quota_per_system,
            )
            for system in systems
        ]
    )
