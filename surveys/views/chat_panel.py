"""The chat panel of a connected block's interaction page (docs/design/transcripts.md §10.3)."""

from django.http import Http404, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext_lazy

from surveys.models import InteractionBlock, TaskText, Turn
from surveys.participant_access import get_session_for_request, staff_or_participant
from surveys.protocol.chat import INTERRUPTED, UNEXPECTED, unanswered_turn
from surveys.protocol.chat_rules import TurnRow, answered_messages
from surveys.protocol.prompts import current_interaction
from surveys.protocol.transcripts import viewer_role
from surveys.protocol.variants import answered_turns, missing_text, naturalistic_missing
from surveys.session_forms import PromptForm

# The participant's view of a failure, by cause: every cause of
# llm.client.CAUSES, and the chat's own. The prompt they typed is kept by the
# chat, so every message that can end in "try again" does.
FAILURE_MESSAGES = {
    "unreachable": gettext_lazy("The system could not be reached. Please try again in a moment."),
    "timeout": gettext_lazy("The system took too long to answer. Please try again."),
    "rate_limited": gettext_lazy(
        "The system is busy right now. Please wait a moment and try again."
    ),
    "server_error": gettext_lazy("The system had a problem answering. Please try again."),
    "stream_broken": gettext_lazy("The answer broke off before it was complete. Please try again."),
    "content_filter": gettext_lazy(
        "The system's content filter stopped this answer. You can rephrase your message and "
        "try again."
    ),
    "rejected": gettext_lazy("The system refused the request. Please tell the experimenter."),
    "refused_url": gettext_lazy(
        "This system's address is not allowed by the platform. Please tell the experimenter."
    ),
    "no_api_key": gettext_lazy(
        "This system is not set up completely (its API key is missing). Please tell the "
        "experimenter."
    ),
    "refused_key": gettext_lazy(
        "This system's API key is not allowed by the platform. Please tell the experimenter."
    ),
    "no_text": gettext_lazy("The system answered without any text. Please try again."),
    "too_long": gettext_lazy(
        "The answer was longer than this study allows, so it was cut off. You can ask for a "
        "shorter answer and try again."
    ),
    INTERRUPTED: gettext_lazy("The answer was interrupted before it was complete."),
    UNEXPECTED: gettext_lazy("The system could not answer because of an error on our side."),
}


TAG_CATEGORIES = PromptForm.base_fields["category"].choices


def failure_message(cause: str):
    return FAILURE_MESSAGES.get(cause, FAILURE_MESSAGES[UNEXPECTED])


def as_shown(turns) -> None:
    """Give each error turn the participant's message for its cause, and each
    user turn whether it got an answer (only an answered one can be tagged)."""
    ordered = sorted(turns, key=lambda turn: turn.position)
    rows = [TurnRow(t.position, t.role, "", t.reply_to_id, t.pk) for t in ordered]
    answered = answered_messages(rows)
    for turn in turns:
        if turn.role == Turn.Role.ERROR:
            turn.failure_message = failure_message(turn.error_cause)
        elif turn.role == Turn.Role.USER:
            turn.is_answered = turn.pk in answered


def chat_context(session, block: int) -> dict:
    """The chat panel of the interaction page: its turns in one query."""
    turns = list(
        Turn.objects.folded()
        .filter(transcript__interaction__session=session, transcript__interaction__block=block)
        .select_related("prompt")
    )
    as_shown(turns)
    unanswered = unanswered_turn(turns)
    return {
        # The system prompt is the coordinator's, not part of what is shown.
        "turns": [turn for turn in turns if turn.role != Turn.Role.SYSTEM],
        "unanswered_turn": unanswered,
        "tag_categories": tag_categories_of(session.study),
    }


def tag_categories_of(study) -> tuple:
    """The categories a message is tagged with: none under the naturalistic protocol."""
    return () if study.is_naturalistic else TAG_CATEGORIES


def naturalistic_context(session, block: int, turns) -> dict:
    """A naturalistic block's task and what it still lacks (docs/design/remote.md §11.5).

    `turns`: the chat's turns as shown (None: an external system, whose
    messages are known only from the transcript imported after the block).
    """
    study = session.study
    # Answered messages only: a failed one does not count (§11.5).
    sent = None if turns is None else sum(getattr(turn, "is_answered", False) for turn in turns)
    return {
        **naturalistic_progress(study, current_interaction(session), sent),
        "naturalistic": True,
        # In the session's language, as the consent (docs/design/remote.md §11.5).
        "task_description": TaskText.text_for(study.pk, session.language),
    }


def naturalistic_progress(study, interaction, sent: int | None) -> dict:
    """The block's counters and what it still lacks, as the page shows them."""
    now = timezone.now()
    missing = naturalistic_missing(study, interaction, now, turns=sent)
    return {
        "minutes_so_far": int((now - interaction.started_at).total_seconds() // 60),
        "turns_sent": sent,
        "missing": missing,
        "missing_text": missing_text(missing) if missing else "",
    }


def progress_after_exchange(transcript_id: int) -> dict | None:
    """What the page's counters read once an answer is stored, for the chat's
    script to put in place without a reload (None under the two-category
    protocol, whose counts change by tagging, a form that reloads the page)."""
    interaction = InteractionBlock.objects.select_related("session__study").get(
        transcript__pk=transcript_id
    )
    study = interaction.session.study
    if not study.is_naturalistic:
        return None
    progress = naturalistic_progress(study, interaction, answered_turns(interaction))
    return {
        "turns": str(progress["turns_sent"]),
        "minutes": str(progress["minutes_so_far"]),
        "missing": progress["missing_text"],
    }


@staff_or_participant
def turn_text_view(request, token, pk):
    """The whole text of one turn of this session, as plain text: where a page
    folds a long turn, it links here. The system prompt is the staff's only."""
    session = get_session_for_request(request, token, light=True)
    turns = Turn.objects.filter(pk=pk, transcript__interaction__session=session)
    if viewer_role(session, request.user) is None:  # the participant
        turns = turns.exclude(role=Turn.Role.SYSTEM)
    turn = turns.only("text").first()
    if turn is None:
        raise Http404
    response = HttpResponse(turn.text, content_type="text/plain; charset=utf-8")
    response["Cache-Control"] = "no-store"
    # Shown, never run: a model's answer is not the platform's page.
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    return response
