"""The transcripts in the table exports (docs/design/transcripts.md §10.6): transcript_id
in Evaluations joins the Transcripts rows of the same block, in XLSX, JSON and
CSV; neither is there without free text; a redaction reaches the files; turn
times leave as dates and durations only; pilots only on request."""

from collections import defaultdict

import pytest

from exports.columns import EVALUATIONS
from surveys.models import InteractionBlock, Transcript, Turn
from tests.exports.readers import all_text
from tests.exports.transcript_factory import add_transcripts, has_transcript, redact
from tests.exports.transcript_tables import (
    TABLE_FORMATS,
    as_written,
    database_turns,
    read_tables,
)


@pytest.fixture
def transcribed(populated):
    add_transcripts(populated.study)
    return populated


@pytest.mark.parametrize("fmt", TABLE_FORMATS)
def test_every_evaluation_joins_the_transcript_rows_of_its_block(transcribed, run_export, fmt):
    # Given a study whose blocks have transcripts (one block in four has none)
    study = transcribed.study

    # When the coordinator exports it with free text
    job = run_export(study, fmt, include_free_text=True)
    assert job.status == "succeeded", job.error_message
    tables = read_tables(job)

    # Then each transcript's rows name one block, and that block's evaluation
    rows_of: dict[str, list[dict]] = defaultdict(list)
    for row in tables["transcripts"]:
        rows_of[row["transcript_id"]].append(row)
    blocks_of = {
        code: {(row["session_id"], row["block"], row["evaluation_id"]) for row in rows}
        for code, rows in rows_of.items()
    }
    assert all(len(blocks) == 1 for blocks in blocks_of.values())
    without = 0
    for evaluation in tables["evaluations"]:
        code = evaluation["transcript_id"]
        if not code:
            without += 1
            continue
        block = (evaluation["session_id"], evaluation["block"], evaluation["evaluation_id"])
        assert blocks_of[code] == {block}
    assert without >= 1  # a block without a transcript leaves transcript_id empty
    joined = {row["transcript_id"] for row in tables["evaluations"]} - {""}
    # A transcript whose SHS was not submitted (the abandoned session) has no evaluation.
    unjoined = [code for code in blocks_of if code not in joined]
    assert len(unjoined) == 1 and next(iter(blocks_of[unjoined[0]]))[2] == ""

    # ... and the rows are the database's turns, in order, nothing more
    expected = database_turns(study)
    assert set(rows_of) == set(expected)
    for code, turns in expected.items():
        exported = rows_of[code]
        assert [row["position"] for row in exported] == [str(t.position) for t in turns]
        assert [row["role"] for row in exported] == [t.role for t in turns]
        assert [row["text"] for row in exported] == [as_written(t.text, fmt) for t in turns]


@pytest.mark.parametrize("fmt", [*TABLE_FORMATS, "csv", "sav-tables"])
def test_without_free_text_there_is_no_transcript_anywhere(transcribed, run_export, fmt):
    if fmt.startswith("sav"):
        pytest.importorskip("pyreadstat")
    job = run_export(transcribed.study, fmt)

    assert job.status == "succeeded", job.error_message
    text = all_text(job.absolute_path, fmt)
    assert "transcript_id" not in text
    codes = Transcript.objects.values_list("code", flat=True)
    assert [code for code in codes if code in text] == []
    assert "Answer 1: it depends" not in text
    if fmt in TABLE_FORMATS:
        assert read_tables(job)["transcripts"] is None


def test_the_free_text_columns_of_the_evaluations_come_last():
    assert [c.key for c in EVALUATIONS.columns if c.free_text] == [
        "transcript_id",
        "override_reason",
        "prompt_texts",
    ]


@pytest.mark.parametrize("fmt", TABLE_FORMATS)
def test_an_export_after_a_redaction_carries_the_redacted_text(
    transcribed, run_export, personas, fmt
):
    # Given a tagged user turn whose text names someone, redacted by a coordinator
    turn = Turn.objects.filter(
        role=Turn.Role.USER,
        prompt__isnull=False,
        transcript__interaction__session__is_pilot=False,
        text__startswith="What is the area of Austria?",
    ).first()
    original = turn.text
    coordinator = personas["coordinator_a"]
    redact(turn, "[name removed]", by=coordinator, reason="Participant said: Maria Huber")

    # When the study is exported afterwards
    job = run_export(transcribed.study, fmt, include_free_text=True)

    # Then its row carries the replacement, marked redacted, and only that row is
    rows = read_tables(job)["transcripts"]
    redacted = [row for row in rows if row["redacted"] == "1"]
    assert [(row["transcript_id"], row["position"], row["text"]) for row in redacted] == [
        (turn.transcript.code, str(turn.position), "[name removed]")
    ]
    assert {row["redacted"] for row in rows} == {"0", "1"}
    # ... and the original text is nowhere (not in prompt_texts either), nor who redacted it or why
    text = all_text(job.absolute_path, fmt)
    assert original not in text
    for secret in (coordinator.email, "Maria Huber", "Participant said"):
        assert secret not in text


def test_turn_times_leave_as_dates_and_durations(transcribed, run_export):
    job = run_export(transcribed.study, "json", include_free_text=True)

    rows = read_tables(job)["transcripts"]
    chat = [row for row in rows if row["source"] == "chat"]
    imported = [row for row in rows if row["source"] == "import"]
    assert chat and imported
    # The factory's chat turns start 30 s apart from the block's start and last 4.25 s.
    for row in chat:
        assert float(row["start_seconds"]) == 30 * int(row["position"])
        assert float(row["duration_seconds"]) == pytest.approx(4.25, abs=0.051)
        assert len(row["date"]) == 10 and "T" not in row["date"]
    answers = [row for row in chat if row["role"] == "assistant"]
    assert {(r["first_token_ms"], r["latency_ms"], r["model"]) for r in answers} == {
        ("380", "4250", "demo-model-1")
    }
    assert {row["error_cause"] for row in chat if row["role"] == "error"} == {"timeout"}
    # An import has no times, and says in which format it came.
    assert {(row["date"], row["start_seconds"], row["first_token_ms"]) for row in imported} == {
        ("", "", "")
    }
    assert {row["import_format"] for row in imported} == {"text", "markdown", "json"}
    assert {row["import_format"] for row in chat} == {""}


def test_a_tagged_user_turn_carries_its_prompt_log_category_and_flags(transcribed, run_export):
    job = run_export(transcribed.study, "xlsx", include_free_text=True)

    rows = read_tables(job)["transcripts"]
    tagged = [row for row in rows if row["category"]]
    assert {row["role"] for row in tagged} == {"user"}
    assert {row["category"] for row in tagged} == {"verified", "glatteis"}
    # Six prompts per block: one follow-up, two source requests, one challenge.
    flags = defaultdict(lambda: [0, 0, 0])
    for row in tagged:
        counts = flags[row["transcript_id"]]
        for number, key in enumerate(("follow_up", "source_request", "challenge")):
            counts[number] += int(row[key])
    assert {tuple(counts) for counts in flags.values()} == {(1, 2, 1)}
    untagged = [row for row in rows if not row["category"]]
    assert {(row["follow_up"], row["source_request"], row["challenge"]) for row in untagged} == {
        ("", "", "")
    }


def test_pilot_transcripts_only_on_request(transcribed, run_export):
    pilot_codes = set(
        Transcript.objects.filter(interaction__session__is_pilot=True).values_list(
            "code", flat=True
        )
    )
    assert pilot_codes

    left_out = read_tables(run_export(transcribed.study, "json", include_free_text=True))
    asked = read_tables(
        run_export(transcribed.study, "json", include_free_text=True, include_pilot=True)
    )

    assert pilot_codes.isdisjoint(row["transcript_id"] for row in left_out["transcripts"])
    assert pilot_codes <= {row["transcript_id"] for row in asked["transcripts"]}
    assert pilot_codes <= {row["transcript_id"] for row in asked["evaluations"]}


def test_the_factory_leaves_some_blocks_without_a_transcript(transcribed):
    blocks = InteractionBlock.objects.select_related("session")
    assert {has_transcript(block) for block in blocks} == {True, False}
    assert Transcript.objects.count() == sum(has_transcript(block) for block in blocks)


def test_a_turn_started_after_the_export_began_is_left_out(transcribed, run_export):
    # Given a chat still running: its next turn starts after the export's moment
    from datetime import timedelta

    from django.utils import timezone

    last = Turn.objects.filter(transcript__source=Transcript.Source.CHAT).order_by("-pk").first()
    later = Turn.objects.create(
        transcript=last.transcript,
        position=last.position + 1,
        role=Turn.Role.USER,
        text="typed after the export began",
        started_at=timezone.now() + timedelta(hours=1),
    )

    job = run_export(transcribed.study, "json", include_free_text=True, include_pilot=True)

    rows = read_tables(job)["transcripts"]
    positions = [row["position"] for row in rows if row["transcript_id"] == last.transcript.code]
    assert positions == [str(number) for number in range(1, last.position + 1)]
    assert later.text not in {row["text"] for row in rows}


@pytest.mark.parametrize("fmt", [*TABLE_FORMATS, "jsonl"])
def test_no_one_who_imported_or_ran_a_session_is_named_with_the_transcripts(
    transcribed, run_export, fmt
):
    # The experimenters imported the block-2 transcripts (Transcript.imported_by).
    assert Transcript.objects.filter(imported_by__isnull=False).exists()

    job = run_export(transcribed.study, fmt, include_free_text=True, include_pilot=True)

    text = all_text(job.absolute_path, fmt).lower()
    assert "answer 1: it depends" in text
    assert sorted(s for s in transcribed.secrets if s.lower() in text) == []
