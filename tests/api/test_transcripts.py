"""External systems' transcripts through the API (docs/design/api.md §16.4, the
import of docs/design/transcripts.md §10.4): the ended external blocks a
token's owner may import for, and the import by the page's form and service."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from api.tokens import api_token_issue
from audit.models import AuditEntry
from surveys.models import InteractionBlock, LLMSystem, Transcript, Turn, TurnRedaction
from surveys.protocol.transcripts import transcript_import, turn_redact
from surveys.transcript_import import MAX_CHARACTERS
from surveys.views.transcripts import transcripts_context
from tests.api.conftest import READ, READ_WRITE, ApiClient
from tests.personas import make_user

EXCHANGE = "User: Who wrote Faust?\nAssistant: Goethe.\nUser: When?\nAssistant: 1808 and 1832."
LIST = "/api/v1/studies/study-a/external-blocks/"


def put_url(block, slug="study-a") -> str:
    return f"/api/v1/studies/{slug}/external-blocks/{block.pk}/transcript/"


def put(api, block, body=None, slug="study-a"):
    body = {"format": "text", "text": EXCHANGE} if body is None else body
    return api.put(put_url(block, slug), body, content_type="application/json")


def ended_block(session, number=1, **fields) -> InteractionBlock:
    system = session.first_system if number == 1 else session.second_system
    values = {"ended_at": timezone.now(), **fields}
    return InteractionBlock.objects.create(session=session, block=number, system=system, **values)


def connected_block(make_session, study) -> InteractionBlock:
    system = LLMSystem.objects.create(
        study=study,
        name="Connected",
        kind="connected",
        base_url="https://llm.example.org/v1",
        model_name="m",
    )
    return ended_block(make_session(first_system=system))


@pytest.fixture
def block(make_session):
    """Block 1 of a session of experimenter A, ended, with an external system."""
    return ended_block(make_session())


def stored_rows() -> tuple[int, int]:
    return Transcript.objects.count(), Turn.objects.count()


def test_the_sessions_experimenter_imports_a_transcript(api_as, personas, block):
    # Given the experimenter's read-write token
    api = api_as("experimenter_a", [block.session.study])
    before = AuditEntry.objects.count()

    # When they put the block's transcript
    response = put(api, block)

    # Then it is stored as the page stores it, and answered with 201
    assert response.status_code == 201, response.content
    transcript = Transcript.objects.get(interaction=block)
    assert (transcript.source, transcript.import_format) == ("import", "text")
    assert transcript.imported_by == personas["experimenter_a"]
    assert list(transcript.turns.values_list("position", "role")) == [
        (1, "user"),
        (2, "assistant"),
        (3, "user"),
        (4, "assistant"),
    ]
    assert response.json() == {
        "code": transcript.code,
        "source": "import",
        "turns": 4,
        "imported_at": response.json()["imported_at"],
    }
    # And the service's audit row is written once, beside the call's
    rows = list(AuditEntry.objects.order_by("pk")[before:])
    assert sorted(row.kind for row in rows) == sorted(
        [AuditEntry.Kind.TRANSCRIPT_IMPORTED, AuditEntry.Kind.API_TOKEN_USED]
    )


def test_a_second_import_replaces_it_and_keeps_the_code(api_as, personas, block):
    put(api_as("experimenter_a", [block.session.study]), block)
    code = Transcript.objects.get().code

    response = put(
        api_as("coordinator_a", [block.session.study]),
        block,
        {"format": "markdown", "text": "## Nutzer\nWer schrieb Faust?\n\n## Assistent\nGoethe."},
    )

    assert response.status_code == 200, response.content
    assert response.json()["code"] == code and response.json()["turns"] == 2
    transcript = Transcript.objects.get()
    assert (transcript.import_format, transcript.imported_by) == (
        "markdown",
        personas["coordinator_a"],
    )


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            {"format": "docx", "text": EXCHANGE},
            "format",
            "Select a valid choice. docx is not one of the available choices.",
        ),
        ({"text": EXCHANGE}, "format", "This field is required."),
        ({"format": "text", "text": ["User: hi"]}, "text", None),
        ({"format": "text", "text": "User: a\x00b"}, "text", "Null characters are not allowed."),
    ],
)
def test_refused_fields_are_named_and_nothing_is_stored(api_as, block, body, field, message):
    response = put(api_as("experimenter_a", [block.session.study]), block, body)

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    [error] = response.json()["errors"]
    assert error["field"] == field
    if message:
        assert error["message"] == message
    assert stored_rows() == (0, 0)


def test_a_text_that_does_not_parse_names_its_line(api_as, block):
    api = api_as("experimenter_a", [block.session.study])

    response = put(api, block, {"format": "text", "text": "User: Who?\nAsistant: Goethe."})

    assert response.status_code == 400
    problem = response.json()
    assert problem["detail"].startswith("Line 2: unknown role “Asistant”")
    assert problem["errors"] == [{"line": 2, "message": problem["detail"]}]
    assert stored_rows() == (0, 0)


def test_too_long_a_text_is_refused_in_the_pages_words(api_as, block):
    api = api_as("experimenter_a", [block.session.study])
    text = "User: " + "x" * MAX_CHARACTERS

    response = put(api, block, {"format": "text", "text": text})

    assert response.status_code == 400
    assert response.json()["detail"] == (
        "The transcript is longer than 500000 characters; nothing was stored."
    )
    assert "errors" not in response.json()
    assert stored_rows() == (0, 0)


def test_a_block_that_cannot_take_an_import_is_a_conflict(api_as, make_session, study_a):
    # Given a running block and a block of a connected system
    session = make_session()
    running = ended_block(session, ended_at=None)
    connected = connected_block(make_session, study_a)
    api = api_as("coordinator_a", [session.study])

    # When a coordinator imports for them, then the service's refusals answer 409
    first, second = put(api, running), put(api, connected)

    assert (first.status_code, second.status_code) == (409, 409)
    assert "still running" in first.json()["detail"]
    assert "connected system" in second.json()["detail"]
    assert stored_rows() == (0, 0)


def test_only_a_coordinator_imports_over_a_redaction(api_as, personas, block):
    # Given an imported transcript in which a coordinator redacted a turn
    put(api_as("experimenter_a", [block.session.study]), block)
    turn_redact(turn_id=Turn.objects.first().pk, user=personas["coordinator_a"], reason="name")
    api = api_as("experimenter_a", [block.session.study])

    # When the experimenter imports again, then it is a conflict and the redaction stands
    response = put(api, block)

    assert response.status_code == 409
    assert "Only a coordinator can import it again" in response.json()["detail"]
    assert Turn.objects.get(position=1).text == "[redacted]"
    assert [row["importable"] for row in api.get(LIST).json()["results"]] == [False]


def test_a_read_only_token_lists_but_imports_nothing(api_as, block):
    api = api_as("experimenter_a", [block.session.study], access=READ)

    assert api.get(LIST).status_code == 200
    assert put(api, block).status_code == 403
    assert stored_rows() == (0, 0)


def test_another_experimenters_session_is_not_found(api_as, block, study_a):
    # Given a colleague who does not run this session
    colleague = make_user("colleague@example.org")
    study_a.memberships.create(user=colleague, role="experimenter")
    _token, secret = api_token_issue(
        user=colleague,
        name="colleague",
        access=READ_WRITE,
        studies=[study_a],
        expires_at=timezone.now() + timedelta(days=1),
    )
    api = ApiClient(secret)

    assert api.get(LIST).json()["results"] == []
    assert put(api, block).status_code == 404
    assert stored_rows() == (0, 0)


def test_another_studys_block_is_not_found(api_as, block, study_a, study_b):
    api = api_as("coordinator_b", [study_a, study_b])

    assert put(api, block, slug="study-b").status_code == 404
    assert put(api, block).status_code == 404  # not a member of study A
    assert api.get(LIST).status_code == 404
    assert stored_rows() == (0, 0)


def test_the_list_shows_blocks_never_sessions_or_participants(
    api_as, personas, make_session, study_a
):
    # Given an imported block, a waiting one, a running one and a connected one
    session = make_session()
    imported = ended_block(session)
    waiting = ended_block(session, 2)
    ended_block(make_session(), ended_at=None)
    connected_block(make_session, study_a)
    transcript = transcript_import(
        session_id=session.pk, block=1, text=EXCHANGE, fmt="text", user=personas["experimenter_a"]
    )

    # When the experimenter lists the blocks
    response = api_as("experimenter_a", [study_a]).get(LIST)

    # Then the two ended external blocks, newest first, without a session's keys
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 2
    assert [row["id"] for row in body["results"]] == [waiting.pk, imported.pk]
    waiting_row, imported_row = body["results"]
    assert waiting_row["transcript"] is None and waiting_row["importable"] is True
    assert waiting_row["system"] == {"id": waiting.system_id, "name": waiting.system.name}
    assert imported_row["block"] == 1
    assert imported_row["transcript"]["code"] == transcript.code
    assert imported_row["transcript"]["turns"] == 4
    assert imported_row["transcript"]["source"] == "import"
    text = json.dumps(body)
    assert session.token not in text and session.participant.code not in text


def test_importable_follows_the_pages_rule(api_as, personas, make_session, study_a):
    # Given blocks waiting, imported, recorded by the chat, and redacted
    sessions = [make_session() for _ in range(4)]
    blocks = [ended_block(session) for session in sessions]
    experimenter, coordinator = personas["experimenter_a"], personas["coordinator_a"]
    for session in sessions[1:]:
        transcript_import(
            session_id=session.pk, block=1, text=EXCHANGE, fmt="text", user=experimenter
        )
    Transcript.objects.filter(interaction=blocks[2]).update(source="chat")
    turn = Turn.objects.filter(transcript__interaction=blocks[3]).first()
    turn_redact(turn_id=turn.pk, user=coordinator, reason="name")
    assert TurnRedaction.objects.count() == 1

    for persona, role in (("experimenter_a", "experimenter"), ("coordinator_a", "coordinator")):
        # When each lists them
        rows = api_as(persona, [study_a]).get(LIST).json()["results"]
        answered = {row["id"]: row["importable"] for row in rows}

        # Then each block is importable exactly where the page offers its form
        page = {
            row["block"].pk: row["importable"]
            for session in sessions
            for row in transcripts_context(session, role, next_url="/")["transcript_rows"]
        }
        assert answered == page
    assert answered == {blocks[0].pk: True, blocks[1].pk: True, blocks[2].pk: False,
                        blocks[3].pk: True}  # fmt: skip


def _queries(api) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = api.get(LIST)
    assert response.status_code == 200
    return len(queries)


def test_the_list_costs_the_same_queries_for_many_blocks(api_as, personas, make_session, study_a):
    api = api_as("coordinator_a", [study_a])
    ended_block(make_session())
    few = _queries(api)

    for _ in range(12):
        session = make_session()
        ended_block(session)
        ended_block(session, 2)
        transcript_import(
            session_id=session.pk,
            block=2,
            text=EXCHANGE,
            fmt="text",
            user=personas["coordinator_a"],
        )

    assert _queries(api) == few
    assert api.get(LIST).json()["count"] == 25
