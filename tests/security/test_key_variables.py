"""A coordinator cannot make the platform send a server secret as an API key
(llm/keys.py): over real HTTP, a connected system naming SECRET_KEY, the
database's URL, the mail password or another study's key sends nothing at
all to the server it names, from the chat or from "Test connection"."""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.core.cache import cache
from django.urls import reverse

from llm.keys import RefusedKeyVariable, check_key_variable
from surveys.llm_policy import call_policy
from surveys.models import LLMSystem
from tests.surveys.chat import ChatRun

ROOT = Path(__file__).resolve().parent.parent.parent
SECRET = "platform-secret-5e0c7a9b1d3f4e6a8c0b2d4f6a8c0e1b"


class _Recorder(BaseHTTPRequestHandler):
    """Records every request's path and Authorization header; answers as a
    minimal OpenAI-compatible server, so that an allowed key gets an answer."""

    seen: list

    def do_POST(self):
        self.seen.append((self.path, self.headers.get("Authorization", "")))
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if body.get("stream"):
            chunks = [
                {"model": "recorder", "choices": [{"index": 0, "delta": {"content": "OK"}}]},
                {"model": "recorder", "choices": [{"index": 0, "delta": {},
                                                   "finish_reason": "stop"}]},
            ]  # fmt: skip
            payload = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
            self._send("text/event-stream", payload.encode())
        else:
            answer = {"id": "r", "object": "chat.completion", "model": "recorder", "choices": [
                {"index": 0, "message": {"role": "assistant", "content": "OK"},
                 "finish_reason": "stop"}]}  # fmt: skip
            self._send("application/json", json.dumps(answer).encode())

    do_GET = do_POST

    def _send(self, content_type: str, payload: bytes):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def recorder(settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    settings.LLM_MAX_RETRIES = 0
    settings.LLM_KEY_PREFIX = "SHS_LLM_KEY_"
    settings.LLM_KEYS = {}
    handler = type("Recorder", (_Recorder,), {"seen": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.base_url = f"http://127.0.0.1:{server.server_port}/v1"
    server.seen = handler.seen
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def secrets_set(monkeypatch):
    for name in ("SECRET_KEY", "DATABASE_URL", "EMAIL_HOST_PASSWORD", "SHS_LLM_KEY_STUDY_B"):
        monkeypatch.setenv(name, SECRET)


REFUSED = ["SECRET_KEY", "DATABASE_URL", "EMAIL_HOST_PASSWORD", "SHS_LLM_KEY_STUDY_B"]


@pytest.mark.parametrize("variable", REFUSED)
def test_a_chat_with_a_refused_key_variable_sends_nothing(
    study_a, client_for, recorder, secrets_set, settings, variable
):
    settings.LLM_KEYS = {"SHS_LLM_KEY_STUDY_B": ("study-b",)}
    run = ChatRun(client_for("experimenter_a"), study_a, recorder.base_url, api_key_env=variable)

    run.send("What is the tallest mountain of the Alps?")

    assert recorder.seen == []
    error = run.turns()[-1]
    assert (error.role, error.error_cause) == ("error", "refused_key")
    assert SECRET not in run.get().content.decode()


def test_an_allowed_key_variable_is_sent_as_the_bearer_key(
    study_a, client_for, recorder, monkeypatch
):
    # The control: the recorder does see a key when one may be sent.
    monkeypatch.setenv("SHS_LLM_KEY_RECORDER", "sk-allowed-key")
    run = ChatRun(
        client_for("experimenter_a"), study_a, recorder.base_url, api_key_env="SHS_LLM_KEY_RECORDER"
    )

    run.send("Hello")

    assert [turn.role for turn in run.turns()] == ["user", "assistant"]
    assert recorder.seen == [("/v1/chat/completions", "Bearer sk-allowed-key")]


@pytest.mark.parametrize("variable", REFUSED)
def test_testing_the_connection_with_a_refused_key_variable_sends_nothing(
    study_a, client_for, recorder, secrets_set, settings, variable
):
    settings.LLM_KEYS = {"SHS_LLM_KEY_STUDY_B": ("study-b",)}
    system = LLMSystem.objects.create(
        study=study_a, name="Outbound", kind="connected", base_url=recorder.base_url,
        model_name="m", api_key_env=variable,
    )  # fmt: skip
    cache.delete(f"llm-connection-check:{system.pk}")

    response = client_for("coordinator_a").post(
        reverse("surveys:system_check", args=[study_a.slug, system.pk]), follow=True
    )

    assert recorder.seen == []
    assert "The test of “Outbound” failed" in response.content.decode()
    assert SECRET not in response.content.decode()


# Every variable the platform reads is refused, even under a prefix chosen so
# that the prefix rule alone would let it through.
_READS = re.compile(
    r"""(?:environ\.get|environ\[|getenv|envbool|envint|envlist|envkeys|environ\.setdefault)"""
    r"""\(?\s*["']([A-Z_][A-Z0-9_]*)["']"""
)
_COMPOSE = re.compile(r"^\s*-?\s*([A-Z_][A-Z0-9_]*)\s*[:=]", re.M)


def _platform_variables() -> set[str]:
    names = set()
    for folder in ("shs_platform", "surveys", "scoring", "exports", "llm", "criterion",
                   "validation", "deploy", "scripts"):  # fmt: skip
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".sh", "") and path.is_file():
                names |= set(_READS.findall(path.read_text(errors="ignore")))
    compose = ROOT / "docker-compose.yml"
    if compose.exists():
        names |= set(_COMPOSE.findall(compose.read_text()))
    return names


def test_the_platform_reads_the_variables_this_test_searches_for():
    assert {"SECRET_KEY", "DATABASE_URL", "EMAIL_HOST_PASSWORD", "REDIS_URL"} <= (
        _platform_variables()
    )


@pytest.mark.parametrize("name", sorted(_platform_variables()))
def test_no_variable_the_platform_reads_can_be_a_key(settings, name):
    settings.LLM_KEYS = {}
    settings.LLM_KEY_PREFIX = name[:1]
    with pytest.raises(RefusedKeyVariable):
        check_key_variable(name, "study-a", policy=call_policy())
