"""Tagging a message of the built-in chat (docs/design/transcripts.md §10.3): a user turn
tagged with the protocol's category is the block's prompt-log entry, made and
removed through the prompt service, so the minimums and the override rule of
§4 apply unchanged."""

from __future__ import annotations

from django.db import transaction
from django.utils.translation import gettext as _

from surveys.models import PromptEntry, Turn
from surveys.protocol.prompts import (
    current_interaction,
    prompt_add,
    prompt_remove,
    require_open_prompt_log,
)
from surveys.protocol.state import ProtocolError, locked_session
from surveys.protocol.variants import answered_turn_ids


def chat_turn_tag(
    *,
    session_id: int,
    step: str,
    turn_id: int,
    category: str,
    is_follow_up: bool = False,
    is_source_request: bool = False,
    is_challenge: bool = False,
) -> PromptEntry:
    """Tag a user turn (or change its tag): its prompt-log entry, made by the prompt service."""
    flags = {
        "category": category,
        "is_follow_up": is_follow_up,
        "is_source_request": is_source_request,
        "is_challenge": is_challenge,
    }
    require_open_prompt_log(step)
    with transaction.atomic():
        with locked_session(session_id, expected_step=step) as session:
            turn = _user_turn_of_block(session, turn_id)
            _refuse_unanswered(turn)
            if turn.prompt is not None:
                # Retagging keeps the entry (and its place in the log).
                for field, value in flags.items():
                    setattr(turn.prompt, field, value)
                turn.prompt.save(update_fields=list(flags))
                return turn.prompt
        # The text stays on the turn (a redaction there covers the log too).
        entry = prompt_add(session_id=session_id, step=step, **flags)
        turn.prompt = entry
        turn.save(update_fields=["prompt"])
        return entry


def chat_turn_untag(*, session_id: int, step: str, turn_id: int) -> None:
    require_open_prompt_log(step)
    with transaction.atomic():
        with locked_session(session_id, expected_step=step) as session:
            turn = _user_turn_of_block(session, turn_id)
            if turn.prompt_id is None:
                raise ProtocolError(_("That message is not tagged. Nothing was changed."))
        # The turn's link is cleared by the foreign key (SET_NULL).
        prompt_remove(session_id=session_id, step=step, prompt_id=turn.prompt_id)


def _refuse_unanswered(turn: Turn) -> None:
    """Only an answered message is a prompt of the log: one whose call failed
    (or whose answer is still coming) has no answer the SHS could rate, and
    once superseded it is never sent to the system again (chat_rules).
    Removing a tag stays possible, for a tag set before this rule."""
    if turn.pk not in answered_turn_ids(Turn.objects.filter(transcript_id=turn.transcript_id)):
        raise ProtocolError(
            _(
                "That message got no answer from the system, so it cannot be tagged. "
                "Nothing was changed."
            )
        )


def _user_turn_of_block(session, turn_id: int) -> Turn:
    turn = (
        Turn.objects.select_for_update(of=("self",))
        .select_related("prompt")
        .filter(
            pk=turn_id,
            role=Turn.Role.USER,
            transcript__interaction=current_interaction(session),
        )
        .first()
    )
    if turn is None:
        raise ProtocolError(_("That message is not part of this block's chat."))
    return turn
