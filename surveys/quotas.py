"""Quotas per system of a study (docs/design/remote.md §11.7): how many completed and
running sessions each system holds against the target, and whether the study
is full. The allocation itself applies the quota (`surveys.assignment`)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

from surveys.models import Study, StudySession
from surveys.steps import Step


@dataclass(frozen=True)
class SystemQuota:
    name: str
    completed: int
    running: int
    target: int

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


def quota_state(study: Study) -> QuotaState | None:
    """The quota of each active system (two queries), or None without a quota."""
    if not study.quota_per_system:
        return None
    held = StudySession.objects.filter(study=study).holding_allocation()
    completed, running = Q(step=Step.COMPLETE), ~Q(step=Step.COMPLETE)
    counts: dict[int, tuple[int, int]] = {}  # system id -> (completed, running)
    for position in ("first_system", "second_system"):
        rows = held.values(position).annotate(
            completed=Count("pk", filter=completed), running=Count("pk", filter=running)
        )
        for row in rows:
            done, going = counts.get(row[position], (0, 0))
            counts[row[position]] = (done + row["completed"], going + row["running"])
    systems = study.systems.filter(active=True).order_by("pk")
    return QuotaState(
        systems=[
            SystemQuota(system.name, *counts.get(system.pk, (0, 0)), study.quota_per_system)
            for system in systems
        ]
    )
