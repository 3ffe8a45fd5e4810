"""The built-in chat of a connected block (docs/design.md §10.3).

A message is stored as a user turn before the system is asked, so a failed
call never loses what the participant typed; the answer, or the failure and
whatever had streamed before it, is stored as the next turn. A user turn
tagged with the protocol's category is the block's prompt-log entry, made
and removed through the prompt service (`surveys.protocol.prompts`), so the
minimums and the override rule of §4 apply unchanged.

The services are synchronous, like the rest of the protocol; the exchange
with the system (`chat_exchange`) is asynchronous and reaches them through
`sync_to_async`, so no web worker waits on the database during an answer.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from llm.client import ChatFailure, Endpoint, Reply, stream_reply
from surveys.models import (
    InteractionBlock,
    LLMSystem,
    PromptEntry,
    StudySession,
    Transcript,
    Turn,
)
from surveys.protocol.prompts import (
    current_interaction,
    prompt_add,
    prompt_remove,
    require_open_prompt_log,
)
from surveys.protocol.state import ProtocolError, locked_session
from surveys.steps import BLOCK_OF_STEP

logger = logging.getLogger(__name__)

MESSAGE_MAX_LENGTH = 8000
# Recorded when the exchange ends in something the client did not classify
# (a bug of ours, an exception no fault mode foresaw): still an error turn.
UNEXPECTED = "unexpected"
# Beside the causes of `llm.client.CAUSES`: the browser left during the answer.
INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class ChatCall:
    """What one call to the system needs: the stored user turn and the messages."""

    session_id: int
    transcript_id: int
    user_turn_id: int
    system: LLMSystem
    messages: list[dict[str, str]]


def chat_ask(*, session_id: int, step: str, text: str, locked=None) -> ChatCall:
    """Store the participant's message as a user turn; the call to make for it.

    `locked`: the session row, read `FOR UPDATE` by the caller's access check
    in its transaction (as the SHS autosave does), so it is not read twice.
    """
    text = text.strip()
    if not text:
        raise ProtocolError(_("Type a message first. Nothing was sent."))
    if len(text) > MESSAGE_MAX_LENGTH:
        raise ProtocolError(
            _("The message is longer than %(limit)s characters. Nothing was sent.")
            % {"limit": MESSAGE_MAX_LENGTH}
        )
    require_open_prompt_log(step)
    with locked_session(session_id, expected_step=step, locked=locked) as session:
        # The block's transcript, its block and system in one read (none yet:
        # the first message makes it).
        transcript = (
            Transcript.objects.select_related("interaction__system")
            .filter(interaction__session=session, interaction__block=BLOCK_OF_STEP[session.step])
            .first()
        )
        block = transcript.interaction if transcript else _block_of(session)
        system = block.system
        if not system.is_connected:
            raise ProtocolError(
                _("This block's system is not connected to the platform. Nothing was sent.")
            )
        transcript = transcript or _new_transcript(block, system)
        # One read gives the next position and the conversation so far.
        earlier = list(transcript.turns.values_list("position", "role", "text"))
        now = timezone.now()
        turn = Turn.objects.create(
            transcript=transcript,
            position=earlier[-1][0] + 1 if earlier else 0,
            role=Turn.Role.USER,
            text=text,
            started_at=now,
            completed_at=now,
        )
        history = [(role, turn_text) for _position, role, turn_text in earlier]
        return ChatCall(
            session_id=session.pk,
            transcript_id=transcript.pk,
            user_turn_id=turn.pk,
            system=system,
            messages=_messages([*history, (Turn.Role.USER, text)]),
        )


def chat_retry(*, session_id: int, step: str, locked=None) -> ChatCall:
    """Ask again for the block's last user turn, left without an answer by a failure."""
    require_open_prompt_log(step)
    with locked_session(session_id, expected_step=step, locked=locked) as session:
        block = current_interaction(session)
        transcript = Transcript.objects.filter(interaction=block).first()
        # The last turns suffice: after the last answer come only errors.
        turn = unanswered_turn(transcript.turns.order_by("-position")[:50]) if transcript else None
        if turn is None:
            raise ProtocolError(_("Every message of this block has its answer; nothing to retry."))
        return _call_for(session.pk, transcript, turn, session.system_for_block(block.block))


def unanswered_turn(turns: Iterable[Turn]) -> Turn | None:
    """The last user turn when no answer follows it (only error turns, or nothing)."""
    for turn in sorted(turns, key=lambda t: t.position, reverse=True):
        if turn.role == Turn.Role.ASSISTANT:
            return None
        if turn.role == Turn.Role.USER:
            return turn
    return None


def chat_answer_store(*, call: ChatCall, reply: Reply, started_at) -> Turn | None:
    """The system's answer, as the API reported it (None: the block is gone, withdrawn)."""
    return _store_after(
        call,
        role=Turn.Role.ASSISTANT,
        text=reply.text,
        started_at=started_at,
        first_token_ms=reply.first_token_ms,
        latency_ms=reply.latency_ms,
        model=reply.model or "",
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        finish_reason=reply.finish_reason or "",
    )


def chat_failure_store(
    *, call: ChatCall, cause: str, partial_text: str, started_at, latency_ms=None
) -> Turn | None:
    """A failed call: an error turn with its cause, keeping what had streamed before it."""
    return _store_after(
        call,
        role=Turn.Role.ERROR,
        text=partial_text,
        started_at=started_at,
        latency_ms=latency_ms,
        error_cause=cause,
    )


def _store_after(call: ChatCall, **fields) -> Turn | None:
    """The turn after the others, under the session's lock (as a message is).

    Any step: an answer that arrives after the experimenter ended the block is
    still part of the exchange. Nor is it the participant's activity, so the
    session row is only locked, not written.
    """
    with transaction.atomic():
        list(StudySession.objects.select_for_update().filter(pk=call.session_id).values("pk"))
        turns = Turn.objects.filter(transcript_id=call.transcript_id)
        last = turns.aggregate(last=Max("position"))["last"]
        if last is None:
            return None  # withdrawn meanwhile: the transcript went with the block
        return Turn.objects.create(
            transcript_id=call.transcript_id,
            position=last + 1,
            completed_at=timezone.now(),
            **fields,
        )


def _block_of(session) -> InteractionBlock:
    return InteractionBlock.objects.select_related("system").get(
        session=session, block=BLOCK_OF_STEP[session.step]
    )


def _new_transcript(block: InteractionBlock, system: LLMSystem) -> Transcript:
    """Made with the block's first message; the system prompt, if any, is its first turn."""
    transcript = Transcript.objects.create(interaction=block, source=Transcript.Source.CHAT)
    if system.system_prompt:
        Turn.objects.create(
            transcript=transcript, position=0, role=Turn.Role.SYSTEM, text=system.system_prompt
        )
    return transcript


def _messages(turns) -> list[dict[str, str]]:
    """The conversation as the system reads it: questions and answers, no errors.

    The system prompt goes with the endpoint (`Endpoint.of`), not the history.
    """
    asked = (Turn.Role.USER, Turn.Role.ASSISTANT)
    return [{"role": role, "content": text} for role, text in turns if role in asked]


def _call_for(session_id: int, transcript: Transcript, turn: Turn, system) -> ChatCall:
    """The call that asks again for `turn`: the conversation up to it."""
    history = transcript.turns.filter(position__lte=turn.position).values_list("role", "text")
    return ChatCall(
        session_id=session_id,
        transcript_id=transcript.pk,
        user_turn_id=turn.pk,
        system=system,
        messages=_messages(history),
    )


async def chat_exchange(call: ChatCall) -> AsyncIterator[str | Turn | None]:
    """Ask the system: yields the answer's text as it streams, then the stored turn.

    The stored turn is the assistant's answer or an error turn; None when the
    session was withdrawn meanwhile. A failure never escapes: it is recorded.
    """
    started_at = timezone.now()
    streamed: list[str] = []
    try:
        async for piece in stream_reply(Endpoint.of(call.system), call.messages):
            if isinstance(piece, Reply):
                yield await sync_to_async(chat_answer_store)(
                    call=call, reply=piece, started_at=started_at
                )
                return
            streamed.append(piece)
            yield piece
        logger.error("chat call of transcript %s ended without a reply", call.transcript_id)
        yield await _record(call, UNEXPECTED, "".join(streamed), started_at)
    except asyncio.CancelledError:
        # The browser left mid-answer: keep what had streamed, and the retry.
        await asyncio.shield(_record(call, INTERRUPTED, "".join(streamed), started_at))
        raise
    except ChatFailure as failure:
        yield await _record(
            call, failure.cause, failure.partial_text or "".join(streamed), started_at
        )
    except Exception:
        logger.exception("chat call of transcript %s failed unexpectedly", call.transcript_id)
        yield await _record(call, UNEXPECTED, "".join(streamed), started_at)


async def _record(call: ChatCall, cause: str, partial_text: str, started_at) -> Turn | None:
    latency = int((timezone.now() - started_at).total_seconds() * 1000)
    return await sync_to_async(chat_failure_store)(
        call=call, cause=cause, partial_text=partial_text, started_at=started_at, latency_ms=latency
    )


# -- tagging: a tagged user turn is the block's prompt-log entry ------------------------


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
