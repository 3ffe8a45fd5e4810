"""Which sessions and evaluations of a study count, as of which moment: the
submitted evaluations of the non-withdrawn, eligible sessions (pilots when
asked for), their transcripts, what was left out and why, and the prompt
tallies of their blocks. The exports (exports.dataset, exports.tables), the
study report and the criterion and validation studies all select through
here, so that they always count the same rows."""

from collections import Counter
from datetime import datetime

from django.db.models import Count, Exists, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce

from scoring.scores.quality import too_few_turns
from surveys.models import (
    Evaluation,
    InteractionBlock,
    PromptEntry,
    Study,
    StudySession,
    Transcript,
    Turn,
)
from surveys.steps import IN_PROGRESS, Step

# Sessions that leave no data: a withdrawal deletes it, a screen-out never had any.
WITHOUT_DATA = (Step.WITHDRAWN, Step.INELIGIBLE)


def session_filter(study: Study, as_of: datetime, include_pilot: bool, prefix: str = "") -> Q:
    condition = Q(**{f"{prefix}study": study, f"{prefix}created_at__lte": as_of}) & ~Q(
        **{f"{prefix}step__in": WITHOUT_DATA}
    )
    if not include_pilot:
        condition &= Q(**{f"{prefix}is_pilot": False})
    return condition


def included_sessions(study: Study, as_of: datetime, include_pilot: bool):
    return StudySession.objects.filter(session_filter(study, as_of, include_pilot))


def submitted_evaluations(study: Study, as_of: datetime, include_pilot: bool):
    # Only submitted evaluations count: a half-filled form is not a response.
    return Evaluation.objects.submitted().filter(
        session_filter(study, as_of, include_pilot, "session__"), submitted_at__lte=as_of
    )


def exported_transcripts(study: Study, as_of: datetime, include_pilot: bool):
    """The transcripts of the included sessions' blocks as of the export's moment:
    the Evaluations' transcript_id and the Transcripts table take the same ones."""
    return Transcript.objects.filter(
        session_filter(study, as_of, include_pilot, "interaction__session__"),
        created_at__lte=as_of,
    )


def exclusion_counts(study: Study, as_of: datetime, include_pilot: bool) -> dict[str, int]:
    """Counts for the About sheet: what the export leaves out, and why."""
    tally: Counter = Counter()
    by_step = (
        StudySession.objects.filter(study=study, created_at__lte=as_of)
        .values("step", "is_pilot")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for row in by_step:
        if row["is_pilot"]:
            tally["pilot"] += row["n"]
            if not include_pilot:
                continue
        tally[row["step"]] += row["n"]
    tally["unsubmitted_evaluations"] = (
        Evaluation.objects.filter(
            session_filter(study, as_of, include_pilot, "session__"),
        )
        .filter(Q(submitted_at__isnull=True) | Q(submitted_at__gt=as_of))
        .count()
    )
    return {
        "pilot": tally["pilot"],
        "withdrawn": tally[Step.WITHDRAWN],
        "ineligible": tally[Step.INELIGIBLE],
        "abandoned": tally[Step.ABANDONED],
        "in_progress": sum(tally[step] for step in IN_PROGRESS),
        "complete": tally[Step.COMPLETE],
        "unsubmitted_evaluations": tally["unsubmitted_evaluations"],
    }


def prompt_tallies(path: str = "") -> dict[str, Count]:
    """The prompt-log counts of the Prompt log sheet and of the study report, as
    aggregates over the PromptEntry rows reached through `path` ("prompts__"
    from an InteractionBlock, "" over PromptEntry itself)."""

    def tally(**condition) -> Count:
        return Count(f"{path}pk", filter=Q(**{path + k: v for k, v in condition.items()}))

    return {
        "verified": tally(category=PromptEntry.Category.VERIFIED),
        "glatteis": tally(category=PromptEntry.Category.GLATTEIS),
        "follow_ups": tally(is_follow_up=True),
        "source_requests": tally(is_source_request=True),
        "challenges": tally(is_challenge=True),
    }


def _count(rows) -> Coalesce:
    """The number of `rows` (a queryset on OuterRef) as one subquery: 0 when none."""
    counted = rows.order_by().values(group=Value(1)).annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted), 0)


def _of_block(path: str = "") -> dict:
    """The lookups from a row reached by `path` to the evaluation's block (one subquery deep)."""
    return {
        f"{path}session_id": OuterRef("session_id"),
        f"{path}block": OuterRef("block"),
    }


def answered() -> Q:
    """A user turn (the outer row) that got an answer, as the chat counts it
    (surveys.protocol.chat_rules.answers_by_question): an assistant turn that
    names it, or, in a transcript whose answers name none (imported, or stored
    before they did), an assistant turn after it with no user turn between.
    A message whose call failed and was never answered counts for nothing."""
    named = Turn.objects.filter(role=Turn.Role.ASSISTANT, reply_to=OuterRef("pk"))
    user_between = Turn.objects.filter(
        transcript=OuterRef(OuterRef("transcript")),
        role=Turn.Role.USER,
        position__gt=OuterRef(OuterRef("position")),
        position__lt=OuterRef("position"),
    )
    following = Turn.objects.filter(
        ~Exists(user_between),
        transcript=OuterRef("transcript"),
        role=Turn.Role.ASSISTANT,
        reply_to__isnull=True,
        position__gt=OuterRef("position"),
    )
    return Q(Exists(named)) | Q(Exists(following))


def block_activity(as_of: datetime) -> dict:
    """Annotations of an Evaluation queryset: what its block recorded of the
    interaction, as the too-few-turns flag reads it (BLOCK_ACTIVITY order):
    the messages that got an answer, as the chat page and the end of a block
    count them.
    Subqueries of the one query, so that the rows cost no query each."""
    # The transcripts the export's moment knows (as exported_transcripts).
    transcripts = Transcript.objects.filter(created_at__lte=as_of, **_of_block("interaction__"))
    user_turns = Turn.objects.filter(
        answered(),
        role=Turn.Role.USER,
        transcript__created_at__lte=as_of,
        **_of_block("transcript__interaction__"),
    )
    blocks = InteractionBlock.objects.filter(**_of_block())
    return {
        "has_transcript": Exists(transcripts),
        "user_turns": _count(user_turns),
        "logged_prompts": _count(PromptEntry.objects.filter(**_of_block("interaction__"))),
        "overridden": Exists(blocks.exclude(override_reason="")),
    }


BLOCK_ACTIVITY = ("has_transcript", "user_turns", "logged_prompts", "overridden")


def few_turns_flag(
    study: Study, protocol: str, has_transcript, user_turns, logged_prompts, overridden
):
    """The too-few-turns flag of one evaluation from its block_activity values,
    under the protocol the evaluation recorded (docs/design/remote.md §11.5)."""
    if protocol == Study.Protocol.NATURALISTIC:
        minimum = study.min_turns
    else:
        minimum = study.min_verified_prompts + study.min_glatteis_prompts
    return too_few_turns(
        user_turns=user_turns if has_transcript else None,
        logged_prompts=logged_prompts,
        overridden=overridden,
        minimum=minimum,
    )
