"""The built-in chat of a connected block (docs/design/transcripts.md §10.3): sending a
message, retrying a failed answer, tagging a message as a prompt.

Sending is an async view: the access and state checks and the stored turns go
through `sync_to_async`, the call to the system is awaited on the event loop,
so under ASGI no worker is held while a system answers. A browser with
JavaScript asks for the answer as a stream of JSON lines; without, the form
posts normally and the page comes back once the answer is stored.
"""

from __future__ import annotations

import asyncio
import json
import logging
import queue
import threading
import time
from collections.abc import AsyncIterator, Iterator
from functools import partial

from asgiref.sync import async_to_sync, sync_to_async
from django.contrib import messages
from django.core.handlers.asgi import ASGIRequest
from django.db import close_old_connections, connection, connections, transaction
from django.db.models import F
from django.http import HttpResponseRedirect, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from llm.client import close_pool
from surveys.models import Turn
from surveys.models.protocol_fields import Protocol
from surveys.participant_access import get_session_for_request, staff_or_participant
from surveys.protocol.chat import chat_ask, chat_exchange, chat_retry
from surveys.protocol.chat_tags import chat_turn_tag, chat_turn_untag
from surveys.protocol.state import ProtocolError
from surveys.session_forms import PromptForm
from surveys.views.chat_panel import (
    TAG_CATEGORIES,
    as_shown,
    failure_message,
    progress_after_exchange,
)
from surveys.views.session_steps import posted_step
from surveys.views.sessions import refuse_posted

logger = logging.getLogger(__name__)

STREAM = "application/x-ndjson"
_TURN = "surveys/session/_chat_turn.html"
_RETRY = "surveys/session/_chat_retry.html"
FLUSH_SECONDS = 0.1


def _session_url(session, anchor: str = "chat") -> str:
    return reverse("surveys:session", args=[session.token]) + f"#{anchor}"


@staff_or_participant
@require_POST
async def chat_send(request, token):
    def ask(session):
        text = request.POST.get("text", "")
        return chat_ask(session_id=session.pk, step=posted_step(request), text=text, locked=session)

    return await _exchange(request, token, ask)


@staff_or_participant
@require_POST
async def chat_retry_view(request, token):
    def retry(session):
        return chat_retry(session_id=session.pk, step=posted_step(request), locked=session)

    return await _exchange(request, token, retry)


def _begin(request, token, start):
    """Access check, state check and the stored message, in one transaction;
    and the language the access check chose for the answer's texts.

    The access check reads the session row locked, and the service works on
    that row (the autosave's way): the request before the call is short. It
    activates the participant's language on this thread, which the event
    loop's context does not reliably see afterwards: it is read here.
    """
    try:
        with transaction.atomic():
            session = get_session_for_request(request, token, for_update=True)
            language = translation.get_language()
            try:
                return session, start(session), None, language
            except ProtocolError as error:
                transaction.set_rollback(True)
                return session, None, error, language
    finally:
        # The answer takes seconds: its request must not hold a database
        # connection meanwhile (one per participant chatting would pass
        # PostgreSQL's limit): with the pool (settings, DB_POOL) it goes back
        # to the pool here; a persistent connection (DB_POOL=0) stays open.
        if not connection.in_atomic_block:
            close_old_connections()


async def _exchange(request, token, start):
    # `staff_or_participant` read the user asynchronously; the access check reads
    # `request.user`, which would read the row a second time.
    request.user = await request.auser()
    session, call, error, language = await sync_to_async(_begin)(request, token, start)
    wants_stream = STREAM in request.headers.get("Accept", "")
    if error is not None:
        if wants_stream:
            return JsonResponse({"error": str(error)}, status=409)
        return await sync_to_async(refuse_posted)(request, session, error)
    if not wants_stream:
        # Without JavaScript the page comes back with the answer (or the error turn).
        async for _piece in chat_exchange(call):
            pass
        if not isinstance(request, ASGIRequest):
            await close_pool()  # this request's event loop ends with it
        return HttpResponseRedirect(_session_url(session))
    stored = partial(_stored_turns, request, session, call)
    events = _events(call, language, stored)
    # Under WSGI (runserver, the tests' live server) Django would collect an
    # async stream before sending it; a thread of its own streams it instead.
    body = events if isinstance(request, ASGIRequest) else _streamed_from_thread(events)
    response = StreamingHttpResponse(body, content_type=STREAM)
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"  # a proxy in front must not buffer it either
    return response


async def _events(call, language: str, stored_turns) -> AsyncIterator[bytes]:
    """JSON lines: the answer's pieces as they come, then how it ended, with
    the turns as stored (the message's tag form) and the retry after an error.

    The first piece goes at once; later ones are gathered for FLUSH_SECONDS,
    so a system that sends a chunk per word costs a line per tenth of a
    second, not a line (and a write, and a parse in the page) per word. The
    stored turns come with the last line, so the page need not load itself
    again (a whole page per answer), nor get every turn again.
    """
    pending: list[str] = []
    flushed = None
    async for item in chat_exchange(call):
        if isinstance(item, str):
            pending.append(item)
            now = time.monotonic()
            if flushed is None or now - flushed >= FLUSH_SECONDS:
                yield _line(delta="".join(pending))
                pending.clear()
                flushed = now
            continue
        if pending:
            yield _line(delta="".join(pending))
        with translation.override(language):
            try:
                stored = await sync_to_async(stored_turns)(item)
            except Exception:
                # The answer is stored: the page reads its panel itself instead.
                logger.exception("rendering the stored chat turns failed")
                stored = None
            if item is not None and item.role == Turn.Role.ERROR:
                error = str(failure_message(item.error_cause))
                yield _line(error=error, cause=item.error_cause, stored=stored)
            else:
                yield _line(done=True, stored=stored)


def _stored_turns(request, session, call, final) -> dict | None:
    """The turns of this exchange (the message and its answer or error), the
    retry form after an error, and the block's counters, as the page shows
    them: the page swaps them for the ones it drew while streaming. A retried
    message comes again, in place: answered now, it can be tagged."""
    if final is None:
        return None  # the session was withdrawn meanwhile: the page reads itself again
    ids = [call.user_turn_id, final.pk]
    # The study's protocol comes with the turns: the locked session was read without its study.
    turns = list(
        Turn.objects.folded()
        .filter(pk__in=ids)
        .select_related("prompt")
        .annotate(protocol=F("transcript__interaction__session__study__protocol"))
        .order_by("position")
    )
    as_shown(turns)
    tags = () if turns and turns[0].protocol == Protocol.NATURALISTIC else TAG_CATEGORIES
    context = {"session": session, "tag_categories": tags}
    html = [render_to_string(_TURN, {**context, "turn": t}, request=request) for t in turns]
    failed = final.role == Turn.Role.ERROR
    retry = render_to_string(_RETRY, context, request=request) if failed else ""
    progress = progress_after_exchange(call.transcript_id)
    return {"turns": "".join(html), "retry": retry, "progress": progress}


def _line(**event) -> bytes:
    return (json.dumps(event) + "\n").encode()


_END = object()


def _streamed_from_thread(events: AsyncIterator[bytes]) -> Iterator[bytes]:
    """Run the exchange on a thread with its own event loop; hand its lines over.

    When the browser leaves, the WSGI server stops iterating and closes this
    generator: the exchange is cancelled then, as the ASGI server cancels
    it, so the upstream call ends and the turn is stored as interrupted with
    what had arrived, instead of the whole answer being read and recorded as
    received.
    """
    lines: queue.Queue = queue.Queue()
    running: dict = {}

    async def pump():
        running["loop"], running["task"] = asyncio.get_running_loop(), asyncio.current_task()
        if running.get("left"):
            raise asyncio.CancelledError  # the browser left before the call began
        try:
            async for line in events:
                lines.put(line)
        finally:
            await close_pool()  # the thread's event loop ends with it

    def run():
        try:
            async_to_sync(pump)()
        except asyncio.CancelledError:
            pass  # the browser left: the exchange recorded it
        except Exception:
            logger.exception("streaming a chat answer failed")
        finally:
            lines.put(_END)
            # The turns were stored from this thread: its connection ends with it.
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True, name="chat-stream")
    thread.start()
    ended = False
    try:
        while (line := lines.get()) is not _END:
            yield line
        ended = True
    finally:
        running["left"] = not ended
        if not ended and "task" in running:
            running["loop"].call_soon_threadsafe(running["task"].cancel)
            # The interrupted turn is stored before the response is done with.
            thread.join(timeout=30)


# -- tagging a message as a prompt of the log ------------------------------------------


@staff_or_participant
@require_POST
def chat_tag_view(request, token, pk):
    session = get_session_for_request(request, token, light=True)
    form = PromptForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose the prompt's category."))
        return redirect(_session_url(session, f"turn-{pk}"))
    flags = {key: value for key, value in form.cleaned_data.items() if key != "text"}
    try:
        chat_turn_tag(session_id=session.pk, step=posted_step(request), turn_id=pk, **flags)
    except ProtocolError as error:
        return refuse_posted(request, session, error)
    return redirect(_session_url(session, f"turn-{pk}"))


@staff_or_participant
@require_POST
def chat_untag_view(request, token, pk):
    session = get_session_for_request(request, token, light=True)
    try:
        chat_turn_untag(session_id=session.pk, step=posted_step(request), turn_id=pk)
    except ProtocolError as error:
        return refuse_posted(request, session, error)
    return redirect(_session_url(session, f"turn-{pk}"))
