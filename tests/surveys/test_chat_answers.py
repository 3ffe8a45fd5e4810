"""The chat against the shipped demo server over real HTTP: the answer stored
with what the API reported, without JavaScript (a form post, then the page)
and streamed (JSON lines from the ASGI handler); every fault mode ends as an
error turn with its cause, the typed message kept and a retry offered, never
a 500 page (docs/design/transcripts.md §10.3)."""

import asyncio
import contextlib
import gc
import json
import socket
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.test import AsyncClient
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape

from llm.demo_server import answer_words
from surveys.models import LLMSystem
from surveys.protocol.chat import chat_ask, chat_exchange, chat_failure_store
from tests.llm_server import chat_requests, running_demo_server
from tests.surveys.chat import ChatRun
from tests.surveys.statements import statement_shapes

STEP = "block1_interaction"
STREAM = "application/x-ndjson"


@pytest.fixture(autouse=True)
def quick_failures(settings):
    # One try, and a [slow] answer (30 s) is a timeout after one second.
    settings.LLM_MAX_RETRIES = 0
    settings.LLM_IDLE_TIMEOUT_SECONDS = 1
    settings.LLM_ANSWER_TIMEOUT_SECONDS = 1
    settings.LLM_ALLOW_HTTP_LOOPBACK = True


@pytest.fixture
def run(study_a, client_for, llm_server):
    return ChatRun(client_for("experimenter_a"), study_a, llm_server, system_prompt="Be brief.")


def stream(run, text, url_name="surveys:session_chat"):
    """POST through the ASGI handler as the page's script does; the JSON lines."""
    client = AsyncClient()
    client.force_login(run.session.experimenter)

    async def post():
        response = await client.post(
            reverse(url_name, args=[run.token]),
            {"step": STEP, "text": text},
            headers={"accept": STREAM},
        )
        assert response["Content-Type"] == STREAM
        return [json.loads(line) async for line in response.streaming_content]

    return async_to_sync(post)()


def test_without_javascript_the_answer_is_stored_and_shown(run):
    question = "What is the capital of Australia?"

    response = run.send(question)

    assert response.status_code == 302
    assert response.url.endswith(f"/sessions/{run.token}/#chat")
    system, user, answer = run.turns()
    assert (system.role, system.text) == ("system", "Be brief.")
    assert (user.role, user.text) == ("user", question)
    # The system prompt goes with the call (the demo server says it saw one).
    sent = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": question}]
    expected = "".join(answer_words(sent))
    assert "A system prompt is in effect." in expected
    assert (answer.role, answer.text, answer.model) == ("assistant", expected, "demo")
    assert answer.finish_reason == "stop"
    assert answer.prompt_tokens > 0 and answer.completion_tokens == len(expected.split())
    assert 0 <= answer.first_token_ms <= answer.latency_ms
    assert answer.started_at <= answer.completed_at
    assert escape(expected) in run.get().content.decode()


def test_the_history_goes_with_the_next_question(run):
    run.send("First question")
    run.send("Second question")

    roles = [turn.role for turn in run.turns()]
    assert roles == ["system", "user", "assistant", "user", "assistant"]
    assert run.turns()[-1].prompt_tokens > run.turns()[2].prompt_tokens


@pytest.fixture(scope="module")
def slow_llm_server():
    """Answers spread over 0.6 s (within the tests' one-second timeout)."""
    with running_demo_server("--delay", "0.6") as server:
        yield server.base_url


def test_streamed_the_answer_comes_in_pieces_then_done(run, slow_llm_server):
    LLMSystem.objects.filter(pk=run.system.pk).update(base_url=slow_llm_server)

    events = stream(run, "What does the SHS measure?")

    # A chunk per word from the system; a line per tenth of a second to the page.
    deltas = [event["delta"] for event in events if "delta" in event]
    assert 3 <= len(deltas) <= 10
    assert events[-1]["done"] is True
    answer = run.turns()[-1]
    assert answer.role == "assistant" and answer.text == "".join(deltas)
    # The last line brings the two turns as stored, the message with its tag
    # form, so the page need not load itself again; no retry after an answer.
    user = run.turns()[-2]
    stored = events[-1]["stored"]
    tag = reverse("surveys:session_chat_tag", args=[run.token, user.pk])
    assert stored["turns"].count('<li class="turn ') == 2
    assert f'action="{tag}"' in stored["turns"] and 'name="csrfmiddlewaretoken"' in stored["turns"]
    assert escape(answer.text[:40]) in stored["turns"]
    assert stored["retry"] == ""


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


FAULTS = [
    # marker or system change, the cause recorded, whether some text had streamed
    ("[429]", {}, "rate_limited", False),
    ("[500]", {}, "server_error", False),
    ("[drop]", {}, "stream_broken", True),
    ("[filter]", {}, "content_filter", True),
    ("[slow]", {}, "timeout", False),
    ("", {"base_url": "closed port"}, "unreachable", False),
    ("", {"base_url": "http://192.168.10.1/v1"}, "refused_url", False),
    ("", {"api_key_env": "SHS_LLM_KEY_CHAT_TEST_UNSET"}, "no_api_key", False),
]


@pytest.mark.parametrize(("marker", "system", "cause", "partial"), FAULTS)
@pytest.mark.parametrize("streamed", [False, True], ids=["form", "stream"])
def test_a_failure_is_an_error_turn_and_the_message_is_kept(
    run, monkeypatch, marker, system, cause, partial, streamed
):
    monkeypatch.delenv("SHS_LLM_KEY_CHAT_TEST_UNSET", raising=False)
    if system.get("base_url") == "closed port":
        system = {"base_url": _closed_port_url()}
    LLMSystem.objects.filter(pk=run.system.pk).update(**system)
    question = f"Tell me about the Glatteis bridge {marker}".strip()

    if streamed:
        events = stream(run, question)
        assert events[-1]["cause"] == cause and events[-1]["error"]
        # The turns as stored come with it, and the retry for the kept message.
        stored = events[-1]["stored"]
        assert stored["turns"].count('<li class="turn ') == 2
        # Unanswered, the message cannot be tagged.
        assert "tag-form" not in stored["turns"]
        assert "cannot be tagged" in stored["turns"]
        assert reverse("surveys:session_chat_retry", args=[run.token]) in stored["retry"]
        assert bool([e for e in events if "delta" in e]) == partial
    else:
        response = run.send(question)
        assert response.status_code == 302

    user, error = run.turns()[1:]
    assert (user.role, user.text) == ("user", question)
    assert (error.role, error.error_cause) == ("error", cause)
    assert bool(error.text) == partial  # what had streamed is kept in the error turn
    page = run.get()
    assert page.status_code == 200
    html = page.content.decode()
    assert question in html
    assert reverse("surveys:session_chat_retry", args=[run.token]) in html


def test_a_retry_asks_again_for_the_kept_message(run, llm_server):
    LLMSystem.objects.filter(pk=run.system.pk).update(base_url=_closed_port_url())
    run.send("Which river flows through Vienna?")
    LLMSystem.objects.filter(pk=run.system.pk).update(base_url=llm_server)
    asked = chat_requests(llm_server)

    response = run.retry()

    assert response.status_code == 302
    assert chat_requests(llm_server) == asked + 1
    roles = [(turn.role, turn.error_cause) for turn in run.turns()]
    assert roles == [("system", ""), ("user", ""), ("error", "unreachable"), ("assistant", "")]
    assert "Which river" in run.turns()[-1].text
    # Answered now: nothing left to retry.
    assert run.retry().status_code == 409
    assert reverse("surveys:session_chat_retry", args=[run.token]) not in run.get().content.decode()


def test_a_streamed_retry_answers_the_kept_message(run, llm_server):
    LLMSystem.objects.filter(pk=run.system.pk).update(base_url=_closed_port_url())
    stream(run, "Which river flows through Vienna?")
    LLMSystem.objects.filter(pk=run.system.pk).update(base_url=llm_server)

    events = stream(run, "", url_name="surveys:session_chat_retry")

    assert events[-1]["done"] is True
    assert [turn.role for turn in run.turns()] == ["system", "user", "error", "assistant"]
    # The answer, and the message again, to replace the one on the page where
    # it stands: answered now, it has its tag form.
    user = run.turns()[1]
    stored = events[-1]["stored"]["turns"]
    assert stored.count('<li class="turn turn-assistant"') == 1
    assert stored.count(f'<li class="turn turn-user" id="turn-{user.pk}"') == 1
    assert reverse("surveys:session_chat_tag", args=[run.token, user.pk]) in stored


def test_a_message_to_a_block_that_ended_is_refused_and_stored_nowhere(run):
    run.post(STEP, override_reason="ended")

    assert run.send("Too late", step=STEP).status_code == 409
    refusal = stream_refusal(run)
    assert refusal.status_code == 409 and "error" in refusal.json()
    assert run.turns() == []


def stream_refusal(run):
    return run.client.post(
        reverse("surveys:session_chat", args=[run.token]),
        {"step": STEP, "text": "Too late"},
        headers={"accept": STREAM},
    )


def test_a_browser_leaving_mid_answer_leaves_an_interrupted_turn(run, slow_llm_server):
    """Under ASGI the server cancels the response when the browser goes: what had
    streamed is kept in an error turn, and the message can be asked again."""
    LLMSystem.objects.filter(pk=run.system.pk).update(base_url=slow_llm_server)
    call = chat_ask(session_id=run.session.pk, step=STEP, text="A long answer, please")

    async def leave_after_the_first_piece():
        pieces = chat_exchange(call)
        first = await anext(pieces)
        waiting = asyncio.ensure_future(anext(pieces))
        await asyncio.sleep(0.05)
        waiting.cancel()  # what Django's ASGI handler does on a disconnect
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        return first

    first = async_to_sync(leave_after_the_first_piece)()

    user, error = run.turns()[1:]
    assert (user.role, error.role, error.error_cause) == ("user", "error", "interrupted")
    assert error.text.startswith(first) and len(error.text) < 200
    assert reverse("surveys:session_chat_retry", args=[run.token]) in run.get().content.decode()


def test_an_answer_arriving_after_a_withdrawal_is_dropped(run):
    call = chat_ask(session_id=run.session.pk, step=STEP, text="Still there?")
    started = timezone.now()
    run.client.post(reverse("surveys:session_withdraw", args=[run.token]))

    assert (
        chat_failure_store(call=call, cause="timeout", partial_text="", started_at=started) is None
    )
    assert run.turns() == []


def test_a_message_costs_the_same_statements_however_long_the_chat(run):
    """Pinned: the message, its history and the answer in a fixed number of
    statements (BEGIN, SAVEPOINT and their ends apart), whatever came before."""

    def statements_of_a_message(text):
        with CaptureQueriesContext(connection) as queries:
            assert run.send(text).status_code == 302
        # Transaction control and the Django session's row (read only where
        # the session engine has no cache) left out: tests/surveys/statements.py.
        return statement_shapes(q["sql"] for q in queries)

    run.send("The first message makes the transcript")
    second = statements_of_a_message("Second")
    for number in range(3, 6):
        run.send(f"Message {number}")
    sixth = statements_of_a_message("Sixth")

    # Ten: two of them set and clear the answer in flight (one per session).
    assert len(sixth) == len(second) <= 10, "\n".join(sixth)


def test_without_javascript_under_asgi_the_view_awaits_the_answer(run):
    """The form's path through the ASGI handler, as the uvicorn workers serve it."""
    client = AsyncClient()
    client.force_login(run.session.experimenter)

    async def post():
        url = reverse("surveys:session_chat", args=[run.token])
        return await client.post(url, {"step": STEP, "text": "Served by uvicorn?"})

    response = async_to_sync(post)()

    assert response.status_code == 302 and response.url.endswith("#chat")
    assert [turn.role for turn in run.turns()] == ["system", "user", "assistant"]


def test_under_wsgi_each_request_closes_its_connection_pool(run):
    """Django's WSGI handler (runserver, the test client) runs the chat's view
    on an event loop of its own per request: the connections opened on that
    loop close with the request, not never (a pool holds its loop alive)."""
    run.send("A first question")  # the test client's own sockets, opened once
    before = _open_sockets()

    run.send("A question without JavaScript")
    gc.collect()

    assert _open_sockets() == before
    assert run.turns()[-1].role == "assistant"


def _open_sockets() -> int:
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if _readlink(fd).startswith("socket:"))


def _readlink(path: Path) -> str:
    try:
        return str(path.readlink())
    except OSError:
        return ""
