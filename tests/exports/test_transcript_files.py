"""The transcripts file for annotation tools (JSONL), the codebook and About of
exports with transcripts, the formula guard on turn text, and how the page and
the command ask for them (docs/design/transcripts.md §10.6)."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from exports.models import ExportJob
from exports.runner import export_job_run
from exports.services import export_job_create
from exports.transcript_columns import EXPORT_LOCAL_COLUMNS, TRANSCRIPT_COLUMNS, TRANSCRIPTS
from shs_platform.spreadsheet_cells import looks_like_formula
from surveys.models import Transcript, Turn
from tests.exports.conftest import INJECTIONS
from tests.exports.readers import (
    read_csv_tables,
    read_json,
    read_xlsx,
    sheet_dicts,
    xlsx_cells,
)
from tests.exports.transcript_factory import add_transcripts
from tests.exports.transcript_tables import database_turns

PER_TRANSCRIPT = (*TRANSCRIPT_COLUMNS, *EXPORT_LOCAL_COLUMNS)
TURN_KEYS = [c.key for c in TRANSCRIPTS.columns if c.key not in PER_TRANSCRIPT]


@pytest.fixture
def transcribed(populated):
    add_transcripts(populated.study)
    return populated


def test_the_jsonl_file_has_one_parsable_line_per_transcript(transcribed, run_export):
    # Given a turn with the separators that some readers split lines at, and a line break
    turn = Turn.objects.filter(role=Turn.Role.ASSISTANT).first()
    turn.text = "first line\nsecond\u2028third\u2029fourth\r\nfifth"
    turn.save(update_fields=["text"])

    job = run_export(transcribed.study, "jsonl", include_free_text=True)

    assert job.status == "succeeded", job.error_message
    assert (job.extension, job.content_type) == ("jsonl", "application/jsonl")
    raw = job.absolute_path.read_text(encoding="utf-8")
    # Every way of splitting lines finds the same lines, each one JSON object.
    assert raw.splitlines() == raw.split("\n")[:-1]
    lines = [json.loads(line) for line in raw.split("\n")[:-1]]
    expected = database_turns(transcribed.study)
    assert sorted(line["transcript_id"] for line in lines) == sorted(expected)
    for line in lines:
        assert list(line) == [*TRANSCRIPT_COLUMNS, "turns"]
        turns = expected[line["transcript_id"]]
        interaction = turns[0].transcript.interaction
        assert (line["block"], line["language"]) == (
            interaction.block,
            interaction.session.language,
        )
        assert line["system"] == interaction.system.name
        assert [list(t) for t in line["turns"]] == [TURN_KEYS] * len(turns)
        assert [(t["position"], t["role"], t["text"]) for t in line["turns"]] == [
            (t.position, t.role, t.text) for t in turns
        ]
    assert any(t["text"] == turn.text for line in lines for t in line["turns"])


def test_the_jsonl_file_needs_free_text(transcribed, personas):
    with pytest.raises(ValueError, match="free text"):
        export_job_create(
            study=transcribed.study, requested_by=personas["coordinator_a"], fmt="jsonl"
        )
    assert not ExportJob.objects.exists()


def test_a_jsonl_job_made_without_free_text_fails_saying_why(transcribed, run_export):
    job = ExportJob.objects.create(study=transcribed.study, format="jsonl")
    export_job_run(job_id=job.pk)
    job.refresh_from_db()

    assert job.status == "failed"
    assert job.error_message.startswith("The transcripts file (JSONL) is free text")


def test_the_exports_page_asks_for_free_text_with_the_jsonl_file(
    transcribed, client_for, django_capture_on_commit_callbacks
):
    client = client_for("coordinator_a")
    url = reverse("exports:export_list", args=[transcribed.study.slug])

    # The page offers the file, and refuses it without free text, starting nothing
    assert b'value="jsonl"' in client.get(url).content
    refused = client.post(url, {"format": "jsonl"})
    assert refused.status_code == 200
    assert "tick “Include free text”" in refused.content.decode()
    assert not ExportJob.objects.exists()

    # With free text it starts the job, and the coordinator downloads the file
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(url, {"format": "jsonl", "include_free_text": "on"})
    job = ExportJob.objects.get()
    assert started.status_code == 302 and (job.format, job.include_free_text) == ("jsonl", True)
    download = client.get(reverse("exports:job_download", args=[transcribed.study.slug, job.token]))
    assert download["Content-Type"] == "application/jsonl"
    assert download["Content-Disposition"].endswith('.jsonl"')
    lines = b"".join(download.streaming_content).decode().splitlines()
    assert len(lines) == len(database_turns(transcribed.study))


@pytest.mark.parametrize("fmt", ["xlsx", "json", "csv-tables"])
def test_the_codebook_documents_every_column_of_every_table(transcribed, run_export, fmt):
    job = run_export(transcribed.study, fmt, include_free_text=True)

    if fmt == "xlsx":
        sheets = read_xlsx(job.absolute_path)
        codebook = sheet_dicts(sheets["Codebook"])
        headers = {title: rows[0] for title, rows in sheets.items()}
    elif fmt == "json":
        document = read_json(job.absolute_path)
        codebook = document["codebook"]
        titles = {"evaluations": "Evaluations", "transcripts": "Transcripts"}
        headers = {titles.get(k, k): list(rows[0]) for k, rows in document["tables"].items()}
    else:
        tables = read_csv_tables(job.absolute_path)
        codebook = tables["codebook.csv"][1]
        titles = {"evaluations.csv": "Evaluations", "transcripts.csv": "Transcripts"}
        headers = {titles.get(k, k): header for k, (header, _rows) in tables.items()}
    documented = {(row["sheet"], row["variable"]): row for row in codebook}
    assert headers["Transcripts"] == [c.key for c in TRANSCRIPTS.columns]
    assert "transcript_id" in headers["Evaluations"]
    for title in ("Evaluations", "Transcripts"):
        for column in headers[title]:
            assert documented[(title, column)]["label"], (title, column)
    if fmt == "xlsx":  # every sheet of the workbook
        for title, header in headers.items():
            assert all((title, column) in documented for column in header), title
    role = documented[("Transcripts", "role")]["values"]
    assert "assistant = the system's answer" in role


def test_the_about_text_describes_the_transcripts(transcribed, run_export):
    with_text = read_json(
        run_export(transcribed.study, "json", include_free_text=True).absolute_path
    )
    without = read_json(run_export(transcribed.study, "json").absolute_path)

    turns = Turn.objects.filter(transcript__interaction__session__is_pilot=False).count()
    assert with_text["about"]["Transcripts"].startswith(f"{turns} turns in the Transcripts table")
    assert "transcripts" in with_text["about"]["Free text"]
    # transcript_id is stable: the About says that exports with free text can be joined by it.
    assert "transcript_id" in with_text["about"]["Stable across exports"]
    assert without["about"]["Transcripts"].startswith("not included")
    assert "transcript_id" not in without["about"]["Stable across exports"]


def test_turn_text_that_a_spreadsheet_would_run_is_written_as_text(transcribed, run_export):
    # Given answers that start like formulas (the questions come from INJECTIONS too)
    answers = Turn.objects.filter(role=Turn.Role.ASSISTANT).order_by("pk")[: len(INJECTIONS)]
    for answer, text in zip(answers, INJECTIONS, strict=True):
        answer.text = text
        answer.save(update_fields=["text"])

    xlsx = run_export(transcribed.study, "xlsx", include_free_text=True).absolute_path
    zipped = run_export(transcribed.study, "csv-tables", include_free_text=True).absolute_path

    cells = [c for c in xlsx_cells(xlsx) if c.parent.title == "Transcripts"]
    assert not [c.coordinate for c in cells if c.data_type == "f"]
    risky = [c for c in cells if isinstance(c.value, str) and looks_like_formula(c.value)]
    assert {c.value for c in risky} >= set(INJECTIONS)
    assert all(c.data_type == "s" and c.quotePrefix for c in risky)
    _header, rows = read_csv_tables(zipped)["transcripts.csv"]
    texts = {row["text"] for row in rows}
    assert {"'" + text for text in INJECTIONS} <= texts
    assert not [value for row in rows for value in row.values() if looks_like_formula(value)]


def test_export_study_with_free_text_writes_the_transcripts(transcribed, tmp_path, capsys):
    workbook, lines = tmp_path / "out.xlsx", tmp_path / "out.jsonl"
    slug = transcribed.study.slug

    call_command(
        "export_study", slug, "--format", "xlsx", "-o", str(workbook), "--include-free-text"
    )
    call_command("export_study", slug, "--format", "jsonl", "-o", str(lines), "--include-free-text")

    transcripts = sheet_dicts(read_xlsx(workbook)["Transcripts"])
    assert (
        len(transcripts)
        == Turn.objects.filter(transcript__interaction__session__is_pilot=False).count()
    )
    codes = {json.loads(line)["transcript_id"] for line in lines.read_text().splitlines()}
    assert codes == {row["transcript_id"] for row in transcripts}
    assert codes <= set(Transcript.objects.values_list("code", flat=True))
    assert "free text" in capsys.readouterr().err


def test_export_study_refuses_the_jsonl_file_without_free_text(transcribed, tmp_path):
    with pytest.raises(CommandError, match="--include-free-text"):
        call_command(
            "export_study", transcribed.study.slug, "--format", "jsonl", "-o", str(tmp_path / "x")
        )
    assert not ExportJob.objects.exists()
