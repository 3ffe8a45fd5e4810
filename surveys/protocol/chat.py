"""The built-in chat of a connected block (docs/design/transcripts.md §10.3).

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
import dataclasses
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from datetime import timedelta

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from llm.client import ChatFailure, Endpoint, Reply, stream_reply
from surveys.llm_policy import call_policy
from surveys.models import (
    InteractionBlock,
    LLMSystem,
    StudySession,
    Transcript,
    Turn,
)
from surveys.protocol.chat_rules import (
    TurnRow,
    cleaned,
    conversation,
    sent_so_far,
    unanswered,
)
from surveys.protocol.prompts import (
    current_interaction,
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
    """What one call to the system needs: the stored user turn and what to send."""

    session_id: int
    transcript_id: int
    user_turn_id: int
    system: LLMSystem
    messages: list[dict[str, str]]
    # The positions of the turns in `messages`, recorded with the answer.
    sent_positions: list[int] = field(default_factory=list)

    @property
    def endpoint(self) -> Endpoint:
        # The system prompt is the first of `messages`, as the transcript has it.
        return dataclasses.replace(Endpoint.of(self.system), system_prompt="")


def chat_ask(*, session_id: int, step: str, text: str, locked=None) -> ChatCall:
    """Store the participant's message as a user turn; the call to make for it.

    `locked`: the session row, read `FOR UPDATE` by the caller's access check
    in its transaction (as the SHS autosave does), so it is not read twice.
    """
    text, removed = cleaned(text.strip())
    if not text:
        raise ProtocolError(_("Type a message first. Nothing was sent."))
    if len(text) > MESSAGE_MAX_LENGTH:
        raise ProtocolError(
            _("The message is longer than %(limit)s characters. Nothing was sent.")
            % {"limit": MESSAGE_MAX_LENGTH}
        )
    require_open_prompt_log(step)
    with locked_session(session_id, expected_step=step, locked=locked) as session:
        # The block's transcript, its block, system and study in one read
        # (none yet: the first message makes it).
        transcript = (
            Transcript.objects.select_related("interaction__system__study")
            .filter(interaction__session=session, interaction__block=BLOCK_OF_STEP[session.step])
            .first()
        )
        block = transcript.interaction if transcript else _block_of(session)
        system = block.system
        if not system.is_connected:
            raise ProtocolError(
                _("This block's system is not connected to the platform. Nothing was sent.")
            )
        transcript = transcript or Transcript.objects.create(
            interaction=block, source=Transcript.Source.CHAT
        )
        _refuse_while_answering(transcript, system)
        rows = _with_current_system_prompt(transcript, _rows(transcript), system)
        _refuse_beyond_block_limits(rows, text, system.study)
        turn = Turn.objects.create(
            transcript=transcript,
            position=rows[-1].position + 1 if rows else 0,
            role=Turn.Role.USER,
            text=text,
            cleaned_chars=removed,
            started_at=timezone.now(),
            completed_at=timezone.now(),
        )
        return _call_for(session.pk, transcript, rows, _row(turn), system)


def chat_retry(*, session_id: int, step: str, locked=None) -> ChatCall:
    """Ask again for the block's last user turn, left without an answer by a failure."""
    require_open_prompt_log(step)
    with locked_session(session_id, expected_step=step, locked=locked) as session:
        block = current_interaction(session)
        transcript = Transcript.objects.filter(interaction=block).first()
        rows = _rows(transcript) if transcript else []
        turn = unanswered(rows)
        if turn is None:
            raise ProtocolError(_("Every message of this block has its answer; nothing to retry."))
        system = LLMSystem.objects.select_related("study").get(
            pk=session.system_for_block(block.block).pk
        )
        _refuse_while_answering(transcript, system)
        rows = _with_current_system_prompt(transcript, rows, system)
        return _call_for(session.pk, transcript, rows, turn, system)


def _refuse_while_answering(transcript: Transcript, system: LLMSystem) -> None:
    """One answer in flight per session: a second tab's message, or "Try again"
    during an answer, would otherwise reorder the history sent to the model or
    store two answers for one message. A mark older than the longest an answer
    may take is left by a worker that died mid-answer, and no longer holds."""
    since = transcript.answer_pending_since
    if since is not None and timezone.now() - since < _longest_answer(system):
        raise ProtocolError(
            _(
                "The system is still answering the previous message. Wait for its answer, "
                "then send again. Nothing was sent."
            )
        )
    transcript.answer_pending_since = timezone.now()
    transcript.save(update_fields=["answer_pending_since"])


def _longest_answer(system: LLMSystem) -> timedelta:
    answer = system.answer_timeout_seconds or settings.LLM_ANSWER_TIMEOUT_SECONDS
    # Retries, the connection and storing the answer come on top.
    return timedelta(seconds=2 * answer + settings.LLM_CONNECT_TIMEOUT_SECONDS + 30)


def _refuse_beyond_block_limits(rows: list[TurnRow], text: str, study) -> None:
    """Anyone holding a remote study's public link can send messages on the
    study's paid key: a block's messages and their characters are bounded."""
    count, characters = sent_so_far(rows)
    if count >= study.chat_max_turns_per_block:
        raise ProtocolError(
            _("This block's chat has reached its limit of %(limit)s messages. Nothing was sent.")
            % {"limit": study.chat_max_turns_per_block}
        )
    if characters + len(text) > study.chat_max_chars_per_block:
        raise ProtocolError(
            _("This block's chat has reached its limit of %(limit)s characters. Nothing was sent.")
            % {"limit": study.chat_max_chars_per_block}
        )


def _with_current_system_prompt(transcript, rows: list[TurnRow], system) -> list[TurnRow]:
    """The rows, with a new system turn when the system prompt is not the one
    the transcript last recorded (a coordinator changed it mid-session): the
    transcript shows the prompt each call was sent with."""
    recorded = next((row.text for row in reversed(rows) if row.role == Turn.Role.SYSTEM), "")
    if system.system_prompt == recorded:
        return rows
    turn = Turn.objects.create(
        transcript=transcript,
        position=rows[-1].position + 1 if rows else 0,
        role=Turn.Role.SYSTEM,
        text=system.system_prompt,
    )
    return [*rows, _row(turn)]


def _rows(transcript: Transcript) -> list[TurnRow]:
    fields = ("position", "role", "text", "reply_to_id", "pk")
    return [TurnRow(*values) for values in transcript.turns.values_list(*fields)]


def _row(turn: Turn) -> TurnRow:
    return TurnRow(turn.position, turn.role, turn.text, turn.reply_to_id, turn.pk)


def _call_for(session_id: int, transcript, rows, asked: TurnRow, system) -> ChatCall:
    sent = conversation(rows, asked)
    return ChatCall(
        session_id=session_id,
        transcript_id=transcript.pk,
        user_turn_id=asked.pk,
        system=system,
        messages=sent.messages,
        sent_positions=sent.sent_positions,
    )


def unanswered_turn(turns: Iterable[Turn]) -> Turn | None:
    """The last user turn when no answer follows it (for the page's retry form)."""
    turns = list(turns)
    # Without the text: a page reads turns folded (Turn.objects.folded()).
    ordered = sorted(turns, key=lambda t: t.position)
    rows = [TurnRow(t.position, t.role, "", t.reply_to_id, t.pk) for t in ordered]
    last = unanswered(rows)
    return next((turn for turn in turns if last is not None and turn.pk == last.pk), None)


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


def _store_after(call: ChatCall, *, text: str, **fields) -> Turn | None:
    """The turn after the others, under the session's lock (as a message is),
    naming the message it answers and what was sent; the answer is no longer
    in flight.

    Any step: an answer that arrives after the experimenter ended the block is
    still part of the exchange. Nor is it the participant's activity, so the
    session row is only locked, not written.
    """
    text, removed = cleaned(text)
    with transaction.atomic():
        list(StudySession.objects.select_for_update().filter(pk=call.session_id).values("pk"))
        turns = Turn.objects.filter(transcript_id=call.transcript_id)
        last = turns.aggregate(last=Max("position"))["last"]
        if last is None:
            return None  # withdrawn meanwhile: the transcript went with the block
        Transcript.objects.filter(pk=call.transcript_id).update(answer_pending_since=None)
        return Turn.objects.create(
            transcript_id=call.transcript_id,
            position=last + 1,
            completed_at=timezone.now(),
            text=text,
            cleaned_chars=removed,
            reply_to_id=call.user_turn_id,
            sent_positions=call.sent_positions,
            **fields,
        )


def _block_of(session) -> InteractionBlock:
    return InteractionBlock.objects.select_related("system__study").get(
        session=session, block=BLOCK_OF_STEP[session.step]
    )


async def chat_exchange(call: ChatCall) -> AsyncIterator[str | Turn | None]:
    """Ask the system: yields the answer's text as it streams, then the stored turn.

    The stored turn is the assistant's answer or an error turn; None when the
    session was withdrawn meanwhile. A failure never escapes: it is recorded.
    """
    started_at = timezone.now()
    streamed: list[str] = []
    try:
        async for piece in stream_reply(call.endpoint, call.messages, policy=call_policy()):
            if isinstance(piece, Reply):
                yield await sync_to_async(chat_answer_store)(
                    call=call, reply=piece, started_at=started_at
                )
                return
            streamed.append(piece)
            yield piece
        logger.error("chat call of transcript %s ended without a reply", call.transcript_id)
        yield await _record(call, UNEXPECTED, "".join(streamed), started_at)
    except (asyncio.CancelledError, GeneratorExit):
        # The browser left mid-answer (the ASGI server cancels the task; the
        # WSGI path closes the stream): keep what had streamed, and the retry.
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
