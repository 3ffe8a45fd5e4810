"""No API key anywhere: a chat with a system whose key is in the environment
leaves the key in no database row, no log line (at DEBUG, the client
libraries included), no page and no export (docs/design/systems.md §10.1)."""

import logging
import secrets
import zipfile
from io import StringIO

import pytest
from django.core.management import call_command

from tests.llm_server import running_demo_server
from tests.surveys.chat import ChatRun
from tests.surveys.test_chat_answers import stream

KEY_VARIABLE = "SHS_LLM_KEY_CHAT_TEST"
SECRET = "sk-shs-test-" + secrets.token_hex(16)


@pytest.fixture(scope="module")
def keyed_server():
    """A demo server that answers only requests bringing SECRET."""
    with running_demo_server("--api-key-env", KEY_VARIABLE, env={KEY_VARIABLE: SECRET}) as server:
        yield server.base_url


def _log_everything(caplog):
    # The settings quieten the HTTP libraries; here every record of theirs counts.
    for name in (None, "httpx2", "httpcore2", "openai", "llm"):
        caplog.set_level(logging.DEBUG, logger=name)


def _exports(study, folder) -> str:
    """Every file of a free-text export in three formats, as text (XLSX unzipped)."""
    texts = []
    for fmt in ("json", "jsonl", "xlsx"):
        path = folder / f"export.{fmt}"
        call_command("export_study", study.slug, "--format", fmt, "-o", str(path),
                     "--include-free-text", stdout=StringIO())  # fmt: skip
        if fmt == "xlsx":
            with zipfile.ZipFile(path) as workbook:
                texts += [workbook.read(name).decode() for name in workbook.namelist()]
        else:
            texts.append(path.read_text())
    return "\n".join(texts)


def test_the_key_reaches_the_system_and_nothing_else(
    study_a, client_for, keyed_server, monkeypatch, caplog, capfd, settings, tmp_path
):
    settings.LLM_MAX_RETRIES = 0
    monkeypatch.setenv(KEY_VARIABLE, SECRET)
    _log_everything(caplog)
    run = ChatRun(client_for("experimenter_a"), study_a, keyed_server, api_key_env=KEY_VARIABLE)

    run.send("What is the tallest mountain of the Alps?")
    stream(run, "And the second tallest?")
    run.send("A failing one [500]")
    pages = (
        run.get().content.decode() + run.client.get(f"/studies/{study_a.slug}/").content.decode()
    )

    # The key was sent: the server answered (it refuses a request without it).
    roles = [turn.role for turn in run.turns()]
    assert roles == ["user", "assistant", "user", "assistant", "user", "error"]
    dump = StringIO()
    call_command("dumpdata", stdout=dump)
    assert KEY_VARIABLE in dump.getvalue()  # the variable's name is stored, as it should be
    # The HTTP library's own records are among those searched below.
    assert any(record.name.startswith("httpx2") for record in caplog.records)
    exports = _exports(study_a, tmp_path)
    assert "What is the tallest mountain of the Alps?" in exports  # the chat is in them
    captured = capfd.readouterr()
    for place, text in {
        "database": dump.getvalue(),
        "logs": caplog.text,
        "output": captured.out + captured.err,
        "pages": pages,
        "exports": exports,
    }.items():
        assert SECRET not in text, place


def test_a_wrong_key_is_refused_and_still_never_shown(
    study_a, client_for, keyed_server, monkeypatch, caplog, settings
):
    settings.LLM_MAX_RETRIES = 0
    wrong = "sk-shs-wrong-" + secrets.token_hex(16)
    monkeypatch.setenv(KEY_VARIABLE, wrong)
    _log_everything(caplog)
    run = ChatRun(client_for("experimenter_a"), study_a, keyed_server, api_key_env=KEY_VARIABLE)

    run.send("Hello")

    error = run.turns()[-1]
    assert (error.role, error.error_cause) == ("error", "rejected")
    assert wrong not in caplog.text
    assert wrong not in run.get().content.decode()
