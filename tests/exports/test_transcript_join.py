"""The transcript_id join holds in the formats that carry only the Evaluations
table (one-file CSV, SPSS), and a redaction reaches the annotation file too
(docs/design/transcripts.md §10.6)."""

import json

import pytest

from surveys.models import Transcript, Turn
from tests.exports.readers import read_csv, read_sav, read_sav_tables
from tests.exports.transcript_factory import add_transcripts, redact
from tests.exports.transcript_tables import read_tables


@pytest.fixture
def transcribed(populated):
    add_transcripts(populated.study)
    return populated


def _evaluations(job) -> list[dict]:
    if job.format == "csv":
        return read_csv(job.absolute_path)[1]
    if job.format == "sav":
        frame, _meta = read_sav(job.absolute_path)
    else:
        frame, _meta = read_sav_tables(job.absolute_path)["evaluations.sav"]
    return frame.to_dict("records")


def _blocks(rows) -> list[tuple[str, str, int]]:
    """Each evaluation's transcript_id with what stays the same in every export."""
    return sorted((row["transcript_id"], row["system"], int(float(row["block"]))) for row in rows)


@pytest.mark.parametrize("fmt", ["csv", "sav", "sav-tables"])
def test_the_evaluations_only_formats_carry_the_transcript_ids_of_the_table_formats(
    transcribed, run_export, fmt
):
    if fmt.startswith("sav"):
        pytest.importorskip("pyreadstat")
    # Given the JSON export, whose transcript_id joins its Transcripts table
    reference = read_tables(run_export(transcribed.study, "json", include_free_text=True))

    # When the study is exported with free text in a format without that table
    job = run_export(transcribed.study, fmt, include_free_text=True)

    # Then each evaluation carries the same transcript_id as in the JSON export
    assert job.status == "succeeded", job.error_message
    rows = _evaluations(job)
    assert _blocks(rows) == _blocks(reference["evaluations"])
    assert {row["transcript_id"] for row in rows} - {""} <= set(
        Transcript.objects.values_list("code", flat=True)
    )


def test_the_annotation_file_carries_the_redacted_text_only(transcribed, run_export, personas):
    turn = Turn.objects.filter(
        role=Turn.Role.USER, transcript__interaction__session__is_pilot=False
    ).first()
    original = "My name is Erika Mustermann, what do you know about me?"
    Turn.objects.filter(pk=turn.pk).update(text=original)
    redact(turn, "[name removed]", by=personas["coordinator_a"], reason="said: Maria Huber")

    job = run_export(transcribed.study, "jsonl", include_free_text=True)

    lines = [json.loads(line) for line in job.absolute_path.read_text().splitlines()]
    (line,) = [line for line in lines if line["transcript_id"] == turn.transcript.code]
    (exported,) = [t for t in line["turns"] if t["position"] == turn.position]
    assert (exported["text"], exported["redacted"]) == ("[name removed]", 1)
    assert sum(t["redacted"] for line in lines for t in line["turns"]) == 1
    raw = job.absolute_path.read_text()
    assert original not in raw and "Maria Huber" not in raw
    assert personas["coordinator_a"].email not in raw
