"""The chat panel of a connected block's interaction page (docs/design.md §10.3)."""

from django.utils.translation import gettext_lazy

from llm.client import FAILURE_MESSAGES as CLIENT_MESSAGES
from surveys.models import Turn
from surveys.protocol.chat import INTERRUPTED, UNEXPECTED, unanswered_turn
from surveys.session_forms import PromptForm

# The participant's view of a failure, by cause; the client's own for its causes.
FAILURE_MESSAGES = {
    **CLIENT_MESSAGES,
    INTERRUPTED: gettext_lazy("The answer was interrupted before it was complete."),
    UNEXPECTED: gettext_lazy("The system could not answer because of an error on our side."),
}


TAG_CATEGORIES = PromptForm.base_fields["category"].choices


def failure_message(cause: str):
    return FAILURE_MESSAGES.get(cause, FAILURE_MESSAGES[UNEXPECTED])


def with_failure_messages(turns) -> None:
    """Give each error turn the participant's message for its cause."""
    for turn in turns:
        if turn.role == Turn.Role.ERROR:
            turn.failure_message = failure_message(turn.error_cause)


def chat_context(session, block: int) -> dict:
    """The chat panel of the interaction page: its turns in one query."""
    turns = list(
        Turn.objects.filter(
            transcript__interaction__session=session, transcript__interaction__block=block
        ).select_related("prompt")
    )
    with_failure_messages(turns)
    unanswered = unanswered_turn(turns)
    return {
        # The system prompt is the coordinator's, not part of what is shown.
        "turns": [turn for turn in turns if turn.role != Turn.Role.SYSTEM],
        "unanswered_turn": unanswered,
        "tag_categories": TAG_CATEGORIES,
    }
