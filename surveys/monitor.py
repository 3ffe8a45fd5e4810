"""Figures of the live study monitor, each from one aggregate query (no query per row)."""

from dataclasses import dataclass, field

from django.db.models import Count, Max, Q
from django.utils import timezone

from surveys.models import Evaluation, LLMSystem, Study, StudySession
from surveys.steps import ENDED, PROTOCOL, Step


@dataclass
class MonitorFigures:
    by_state: list[tuple[str, str, int]]
    pilot_sessions: int
    systems: list
    experimenters: list
    in_progress: list
    recent_ended: list
    totals: dict = field(default_factory=dict)


# The page lists at most this many sessions per table, so it stays fast and
# readable however large the study grows; the counts above them are complete.
LISTED_IN_PROGRESS = 100


def monitor_figures(study: Study, *, recent: int = 25) -> MonitorFigures:
    now = timezone.now()
    counted = Q(is_pilot=False)
    state_counts = {
        row["step"]: row["n"]
        for row in study.sessions.filter(counted).values("step").annotate(n=Count("pk"))
    }
    order = [*PROTOCOL, Step.INELIGIBLE, Step.WITHDRAWN, Step.ABANDONED]
    by_state = [(step.value, step.label, state_counts.get(step.value, 0)) for step in order]

    submitted = Q(evaluations__submitted_at__isnull=False, evaluations__session__is_pilot=False)
    systems = (
        LLMSystem.objects.filter(study=study)
        .annotate(
            evaluation_count=Count("evaluations", filter=submitted),
            block1=Count("evaluations", filter=submitted & Q(evaluations__block=1)),
            block2=Count("evaluations", filter=submitted & Q(evaluations__block=2)),
        )
        .order_by("name")
    )
    experimenters = (
        study.sessions.filter(counted)
        .values("experimenter__email")
        .annotate(
            complete=Count("pk", filter=Q(step=Step.COMPLETE)),
            in_progress=Count("pk", filter=~Q(step__in=ENDED)),
            ineligible=Count("pk", filter=Q(step=Step.INELIGIBLE)),
            withdrawn=Count("pk", filter=Q(step=Step.WITHDRAWN)),
            last_session=Max("created_at"),
        )
        .order_by("experimenter__email")
    )
    evaluations = (
        Evaluation.objects.submitted()
        .filter(session__study=study, session__is_pilot=False)
        .aggregate(total=Count("pk"), scored=Count("pk", filter=Q(scored_at__isnull=False)))
    )
    sessions = StudySession.objects.filter(study=study).select_related(
        "experimenter", "participant", "first_system", "second_system"
    )
    in_progress = list(sessions.exclude(step__in=ENDED).order_by("created_at")[:LISTED_IN_PROGRESS])
    for session in in_progress:
        session.seconds_in_step = (now - session.step_entered_at).total_seconds()
        target = study.target_minutes(session.step)
        session.over_target = bool(target and session.seconds_in_step > target * 60)
    recent_ended = list(sessions.filter(step__in=ENDED).order_by("-ended_at")[:recent])
    return MonitorFigures(
        by_state=by_state,
        pilot_sessions=study.sessions.filter(is_pilot=True).count(),
        systems=list(systems),
        experimenters=list(experimenters),
        in_progress=in_progress,
        recent_ended=recent_ended,
        totals={
            "evaluations": evaluations["total"],
            "scored": evaluations["scored"],
            "complete": state_counts.get(Step.COMPLETE, 0),
            "screen_outs": state_counts.get(Step.INELIGIBLE, 0),
            "withdrawals": state_counts.get(Step.WITHDRAWN, 0),
            "abandoned": state_counts.get(Step.ABANDONED, 0),
            "in_progress": sum(state_counts.get(step, 0) for step in PROTOCOL[:-1])
            + study.sessions.filter(is_pilot=True).exclude(step__in=ENDED).count(),
        },
    )
