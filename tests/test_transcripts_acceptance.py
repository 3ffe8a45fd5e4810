"""Transcripts end to end: on the demo study of `make run`, an experimenter runs a
session whose blocks are the connected demo model and an external system with
a pasted transcript; both transcripts show on the session record and, with
free text asked for, in every export, joined to the evaluations by
`transcript_id` (docs/design/systems.md §10).

The demo model answers over real HTTP from the shipped demo server; the
session goes through the same views a browser without JavaScript uses (the
streamed chat in the browser is tests/e2e/test_chat.py).
"""

import csv
import io
import json
import zipfile

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse
from openpyxl import load_workbook

from surveys.models import StudyMembership, StudySession, Transcript
from tests.surveys.runner import SessionRun

pytestmark = pytest.mark.django_db(transaction=True)

PASTED = """User: Who wrote the Voyage of the Beagle?
Assistant: Charles Darwin wrote it, after the voyage of 1831 to 1836.
User: Which ship's captain took him?
Assistant: Robert FitzRoy commanded HMS Beagle.
"""


@pytest.fixture
def demo(monkeypatch, llm_server, settings):
    monkeypatch.setenv("DEMO_LLM_URL", llm_server)
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    with override_settings(DEBUG=True), open("/dev/null", "w") as quiet:
        call_command("seed_demo", stdout=quiet)
    member = StudyMembership.objects.select_related("study", "user")
    return {
        role: member.get(study__slug="shs-demo", role=role)
        for role in (StudyMembership.Role.EXPERIMENTER, StudyMembership.Role.COORDINATOR)
    }


def _chat_block(run, step, study):
    """Six messages to the demo model, tagged to the study minimum."""
    wanted = ["verified"] * study.min_verified_prompts + ["glatteis"] * study.min_glatteis_prompts
    for number, category in enumerate(wanted, start=1):
        url = reverse("surveys:session_chat", args=[run.token])
        response = run.client.post(url, {"step": step, "text": f"Question {number}?"})
        assert response.status_code == 302
        turn = (
            run.session.blocks.get(block=int(step[5])).transcript.turns.filter(role="user").last()
        )
        tag = reverse("surveys:session_chat_tag", args=[run.token, turn.pk])
        assert run.client.post(tag, {"step": step, "category": category}).status_code == 302
    return run.post(step, override_reason="")


def _run_session(client, study) -> StudySession:
    run = SessionRun(client, study)
    assert run.consent().status_code == 302
    run.hand_back()
    for block in (1, 2):
        system = run.session.system_for_block(block)
        step = f"block{block}_interaction"
        if system.is_connected:
            assert _chat_block(run, step, study).status_code == 302
        else:
            assert run.interaction(block).status_code == 302
        assert run.shs(block).status_code == 302
        run.hand_back()
        if not system.is_connected:
            url = reverse("surveys:transcript_import", args=[run.token, block])
            response = client.post(url, {"fmt": "text", "text": PASTED})
            assert response.status_code == 302, response.content.decode()[:2000]
    assert run.demographics().status_code == 302
    assert run.feedback().status_code == 302
    return run.session


def test_a_demo_session_with_both_kinds_of_system_reaches_every_export(
    demo, client_for, client, tmp_path, django_capture_on_commit_callbacks
):
    experimenter, coordinator = demo["experimenter"], demo["coordinator"]
    study = experimenter.study
    client.force_login(experimenter.user)
    session = _run_session(client, study)

    transcripts = {t.interaction.block: t for t in Transcript.objects.filter(
        interaction__session=session).select_related("interaction__system")}  # fmt: skip
    assert sorted(t.source for t in transcripts.values()) == ["chat", "import"]
    chat = next(t for t in transcripts.values() if t.source == "chat")
    assert chat.interaction.system.is_demo
    assert chat.turns.filter(role="assistant").count() == 6
    assert chat.interaction.prompts.count() == 6  # the log derived from the tagged turns

    client.force_login(coordinator.user)
    record = client.get(reverse("surveys:session_record", args=[study.slug, session.token]))
    page = record.content.decode()
    for transcript in transcripts.values():
        assert transcript.code in page
    assert "Robert FitzRoy commanded HMS Beagle." in page
    assert "Question 6?" in page

    joined = _exports(study, tmp_path, django_capture_on_commit_callbacks)
    for fmt, (evaluations, turns) in joined.items():
        for transcript in transcripts.values():
            system = transcript.interaction.system.name
            # The evaluation of that block carries the code, and the turns with
            # that code are that block's, in order.
            assert evaluations[transcript.code] == system, fmt
            rows = turns[transcript.code]
            assert [row["system"] for row in rows] == [system] * transcript.turns.count(), fmt
            assert [row["text"] for row in rows] == list(
                transcript.turns.values_list("text", flat=True)
            ), fmt


def _exports(study, tmp_path, on_commit) -> dict:
    """Per format: {transcript_id: system} of the evaluations, {transcript_id: turns}."""
    files = {}
    for fmt, name in (("xlsx", "e.xlsx"), ("json", "e.json"), ("csv-tables", "e.zip"),
                      ("jsonl", "e.jsonl")):  # fmt: skip
        files[fmt] = tmp_path / name
        with on_commit(execute=True):
            call_command("export_study", study.slug, "--format", fmt, "-o", str(files[fmt]),
                         "--include-free-text", stdout=io.StringIO())  # fmt: skip
    return {
        "xlsx": _from_tables(*_xlsx_tables(files["xlsx"])),
        "json": _from_tables(*_json_tables(files["json"])),
        "csv-tables": _from_tables(*_csv_tables(files["csv-tables"])),
        "jsonl": _from_jsonl(files["jsonl"], _json_tables(files["json"])[0]),
    }


def _from_tables(evaluations, turns):
    by_code = {row["transcript_id"]: row["system"] for row in evaluations if row["transcript_id"]}
    grouped = {}
    for row in sorted(turns, key=lambda row: (row["transcript_id"], int(row["position"]))):
        grouped.setdefault(row["transcript_id"], []).append(row)
    return by_code, grouped


def _xlsx_tables(path):
    workbook = load_workbook(path, read_only=True)

    def rows(sheet):
        header, *body = workbook[sheet].iter_rows(values_only=True)
        # A read-only sheet leaves out a row's trailing empty cells.
        return [dict(zip(header, row + (None,) * (len(header) - len(row)), strict=True))
                for row in body]  # fmt: skip

    return rows("Evaluations"), rows("Transcripts")


def _json_tables(path):
    data = json.loads(path.read_text())
    return data["tables"]["evaluations"], data["tables"]["transcripts"]


def _csv_tables(path):
    with zipfile.ZipFile(path) as archive:

        def rows(name):
            return list(csv.DictReader(io.StringIO(archive.read(name).decode("utf-8-sig"))))

        return rows("evaluations.csv"), rows("transcripts.csv")


def _from_jsonl(path, evaluations):
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    turns = {
        line["transcript_id"]: [{**turn, "system": line["system"]} for turn in line["turns"]]
        for line in lines
    }
    by_code = {row["transcript_id"]: row["system"] for row in evaluations if row["transcript_id"]}
    return by_code, turns
