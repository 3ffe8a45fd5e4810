"""Figures of the live study monitor, each from one aggregate query (no query per row)."""

from collections import Counter
from dataclasses import dataclass

from django.db.models import Count, Max, Q
from django.utils import timezone

from surveys.models import LLMSystem, Study, StudySession
from surveys.pilot import NOTHING_TO_PILOT
from surveys.steps import ENDED, Step

# The page lists at most this many sessions per table, so it stays fast and
# readable however large the study grows; the counts above them are complete.
LISTED_IN_PROGRESS = 100
LISTED_RECENTLY_ENDED = 25


@dataclass
class MonitorFigures:
    by_state: list[tuple[str, str, int]]
    pilot_sessions: int
    systems: list[LLMSystem]
    experimenters: list[dict]
    in_progress: list[StudySession]
    recent_ended: list[StudySession]
    pilot_requests: list[StudySession]
    totals: dict[str, int]


def sessions_by_step(study: Study) -> Counter[tuple[str, bool]]:
    """(step, is_pilot) -> sessions, in one aggregate query."""
    sessions_by = Counter[tuple[str, bool]]()
    for row in study.sessions.values("step", "is_pilot").annotate(n=Count("pk")):
        sessions_by[row["step"], row["is_pilot"]] = row["n"]
    return sessions_by


def monitor_figures(study: Study) -> MonitorFigures:
    sessions_by = sessions_by_step(study)
    by_state = [(step.value, step.label, sessions_by[step, False]) for step in Step]
    systems = systems_with_counts(study)

    listed = study.sessions.select_related(
        "experimenter", "participant", "first_system", "second_system"
    )
    in_progress = list(listed.exclude(step__in=ENDED).order_by("created_at")[:LISTED_IN_PROGRESS])
    now = timezone.now()
    for session in in_progress:
        target = study.target_minutes(session.step)
        session.over_target = bool(
            target and (now - session.step_entered_at).total_seconds() > target * 60
        )
    recent_ended = list(listed.filter(step__in=ENDED).order_by("-ended_at")[:LISTED_RECENTLY_ENDED])

    # A request made before the session was withdrawn or screened out asks
    # about answers that are gone: nothing is left to decide.
    pilot_requests = list(
        listed.select_related("pilot_requested_by")
        .filter(pilot_requested_at__isnull=False)
        .exclude(step__in=NOTHING_TO_PILOT)
        .order_by("pilot_requested_at")
    )

    return MonitorFigures(
        by_state=by_state,
        pilot_sessions=pilot_sessions(sessions_by),
        systems=systems,
        experimenters=_experimenters_with_counts(study),
        in_progress=in_progress,
        recent_ended=recent_ended,
        pilot_requests=pilot_requests,
        totals=monitor_totals(sessions_by, systems),
    )


def pilot_sessions(sessions_by: Counter[tuple[str, bool]]) -> int:
    return sum(n for (_step, pilot), n in sessions_by.items() if pilot)


def monitor_totals(sessions_by: Counter[tuple[str, bool]], systems: list[LLMSystem]) -> dict:
    return {
        # Every evaluation is of one of the study's systems: the rows add up.
        "evaluations": sum(system.evaluation_count for system in systems),
        "scored": sum(system.scored_count for system in systems),
        "complete": sessions_by[Step.COMPLETE, False],
        # All sessions in progress, pilot ones too: the monitor lists them all.
        "in_progress": sum(n for (step, _pilot), n in sessions_by.items() if step not in ENDED),
    }


def systems_with_counts(study: Study) -> list[LLMSystem]:
    submitted = Q(evaluations__submitted_at__isnull=False, evaluations__session__is_pilot=False)
    return list(
        LLMSystem.objects.filter(study=study)
        .annotate(
            evaluation_count=Count("evaluations", filter=submitted),
            block1=Count("evaluations", filter=submitted & Q(evaluations__block=1)),
            block2=Count("evaluations", filter=submitted & Q(evaluations__block=2)),
            scored_count=Count(
                "evaluations", filter=submitted & Q(evaluations__scored_at__isnull=False)
            ),
        )
        .order_by("name")
    )


def _experimenters_with_counts(study: Study) -> list[dict]:
    # The join with the evaluations repeats a session once per evaluation, so
    # sessions are counted distinct.
    return list(
        study.sessions.counted()
        .values("experimenter__email")
        .annotate(
            complete=Count("pk", filter=Q(step=Step.COMPLETE), distinct=True),
            in_progress=Count("pk", filter=~Q(step__in=ENDED), distinct=True),
            ineligible=Count("pk", filter=Q(step=Step.INELIGIBLE), distinct=True),
            withdrawn=Count("pk", filter=Q(step=Step.WITHDRAWN), distinct=True),
            evaluations=Count("evaluations", filter=Q(evaluations__submitted_at__isnull=False)),
            last_session=Max("created_at"),
        )
        .order_by("experimenter__email")
    )
