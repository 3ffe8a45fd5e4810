"""Importing an external block's transcript (docs/design/transcripts.md §10.4): who may,
when, what a second import does, and that nothing is stored from a text that
does not parse."""

import json
from html import escape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from surveys.models import LLMSystem, StudyMembership, Transcript, Turn, TurnRedaction
from surveys.protocol.curation import session_withdraw
from surveys.protocol.state import ProtocolError
from surveys.protocol.transcripts import transcript_import, turn_redact
from surveys.transcript_import import TranscriptError
from tests.personas import make_user
from tests.surveys.runner import SessionRun

EXCHANGE = "User: Who wrote Faust?\nAssistant: Goethe.\nUser: When?\nAssistant: 1808 and 1832."


@pytest.fixture
def after_block1(study_a, client_for):
    """A session at block 1's SHS: block 1's interaction has ended."""
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block1_shs")
    return run


def _import(client, run, block=1, follow=False, **data):
    url = reverse("surveys:transcript_import", args=[run.token, block])
    return client.post(url, {"fmt": "text", "text": EXCHANGE, **data}, follow=follow)


def _turns(transcript) -> list[tuple[int, str, str]]:
    return list(transcript.turns.values_list("position", "role", "text"))


def test_the_experimenter_imports_after_the_block(after_block1, personas):
    response = _import(after_block1.client, after_block1, next=after_block1.url)

    assert response.status_code == 302
    assert response.url == after_block1.url
    transcript = Transcript.objects.get(
        interaction__session=after_block1.session, interaction__block=1
    )
    assert (transcript.source, transcript.import_format) == ("import", "text")
    assert transcript.imported_by == personas["experimenter_a"]
    assert transcript.imported_at is not None
    assert _turns(transcript) == [
        (1, "user", "Who wrote Faust?"),
        (2, "assistant", "Goethe."),
        (3, "user", "When?"),
        (4, "assistant", "1808 and 1832."),
    ]


def test_a_second_import_replaces_the_turns_and_keeps_the_transcript_id(
    after_block1, client_for, personas
):
    _import(after_block1.client, after_block1)
    first = Transcript.objects.get()
    markdown = "## Nutzer\nWer schrieb Faust?\n\n## Assistent\nGoethe."

    response = _import(client_for("coordinator_a"), after_block1, fmt="markdown", text=markdown)

    assert response.status_code == 302
    second = Transcript.objects.get()
    assert second.code == first.code  # the analysts' key does not move
    assert second.imported_by == personas["coordinator_a"]
    assert second.imported_at > first.imported_at
    assert second.import_format == "markdown"
    assert _turns(second) == [(1, "user", "Wer schrieb Faust?"), (2, "assistant", "Goethe.")]


def test_a_json_file_upload(after_block1):
    exchange = [{"role": "user", "content": "Qui ?"}, {"role": "assistant", "content": "Moi."}]
    upload = SimpleUploadedFile("chat.json", json.dumps(exchange).encode(), "application/json")

    response = _import(after_block1.client, after_block1, fmt="json", text="", upload=upload)

    assert response.status_code == 302
    assert _turns(Transcript.objects.get()) == [(1, "user", "Qui ?"), (2, "assistant", "Moi.")]


def test_a_text_that_does_not_parse_is_shown_again_with_its_line(after_block1):
    typed = "User: Who wrote <Faust>?\nAsistant: Goethe."

    response = _import(after_block1.client, after_block1, text=typed)

    assert response.status_code == 400
    page = response.content.decode()
    assert "Line 2: unknown role “Asistant”" in page
    assert escape(typed, quote=False) in page  # the pasted text is kept in the form
    assert not Transcript.objects.exists()


def test_a_misspelt_role_line_stores_nothing_rather_than_losing_a_turn(after_block1):
    # Taken for text, "Usr:" would fold the participant's second question into the answer.
    typed = "User: Who wrote Faust?\nAssistant: Goethe.\nUsr: When?\nAssistant: 1808."

    response = _import(after_block1.client, after_block1, text=typed)

    assert response.status_code == 400
    assert "Line 3: unknown role “Usr” (did you mean “user”?)" in response.content.decode()
    assert not Transcript.objects.exists() and not Turn.objects.exists()


def test_an_uploaded_file_that_does_not_parse_comes_back_as_text(after_block1):
    upload = SimpleUploadedFile("chat.txt", b"Hi\nUser: x", "text/plain")

    response = _import(after_block1.client, after_block1, text="", upload=upload)

    assert response.status_code == 400
    assert "Line 1: text before the first turn" in response.content.decode()
    assert "Hi\nUser: x</textarea>" in response.content.decode()


def test_a_failed_reimport_leaves_the_stored_transcript_as_it_was(after_block1):
    _import(after_block1.client, after_block1)
    before = _turns(Transcript.objects.get())

    response = _import(after_block1.client, after_block1, text="User: a\nAssistant:")

    assert response.status_code == 400
    assert _turns(Transcript.objects.get()) == before


def test_a_parse_error_stores_nothing(after_block1, personas):
    with pytest.raises(TranscriptError):
        transcript_import(
            session_id=after_block1.session.pk,
            block=1,
            text='[{"role": "user", "content": "a"}, {"role": "user"}]',
            fmt="json",
            user=personas["experimenter_a"],
        )
    assert not Transcript.objects.exists() and not Turn.objects.exists()


def _refused(run, user, block=1) -> str:
    with pytest.raises(ProtocolError) as caught:
        transcript_import(
            session_id=run.session.pk, block=block, text=EXCHANGE, fmt="text", user=user
        )
    assert not Transcript.objects.exists()
    return str(caught.value)


def test_not_before_the_block_has_ended(study_a, client_for, personas):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block1_interaction")

    assert "still running" in _refused(run, personas["experimenter_a"])
    assert "holds no interaction" in _refused(run, personas["experimenter_a"], block=2)


def test_not_for_a_connected_system(after_block1, personas):
    system = after_block1.session.first_system
    LLMSystem.objects.filter(pk=system.pk).update(
        kind="connected", base_url="https://llm.example.org/v1", model_name="m"
    )
    assert "connected system" in _refused(after_block1, personas["experimenter_a"])


def test_not_over_what_the_chat_recorded(after_block1, personas):
    # The system was connected when the block ran, and is external now.
    interaction = after_block1.session.blocks.get(block=1)
    chat = Transcript.objects.create(interaction=interaction, source="chat")
    Turn.objects.create(transcript=chat, position=1, role="user", text="typed in the chat")

    with pytest.raises(ProtocolError, match="built-in chat recorded"):
        transcript_import(
            session_id=after_block1.session.pk,
            block=1,
            text=EXCHANGE,
            fmt="text",
            user=personas["experimenter_a"],
        )
    assert list(Turn.objects.values_list("text", flat=True)) == ["typed in the chat"]
    assert Transcript.objects.get().imported_by is None


def test_only_the_sessions_experimenter_or_a_coordinator(after_block1, study_a, personas):
    colleague = make_user("colleague@example.org")
    StudyMembership.objects.create(user=colleague, study=study_a, role="experimenter")

    assert "Only the session's experimenter" in _refused(after_block1, colleague)
    assert "Only the session's experimenter" in _refused(after_block1, personas["coordinator_b"])


def test_not_after_the_participant_withdrew(after_block1, personas):
    session_withdraw(session_id=after_block1.session.pk)
    assert "holds no interaction" in _refused(after_block1, personas["experimenter_a"])


@pytest.mark.parametrize("persona", ["coordinator_b", "outsider"])
def test_other_studies_get_a_404(after_block1, client_for, persona):
    client = client_for(persona)
    page = reverse("surveys:session_transcripts", args=[after_block1.token])

    assert client.get(page).status_code == 404
    assert _import(client, after_block1).status_code == 404
    assert not Transcript.objects.exists()


def test_another_experimenter_of_the_study_gets_a_404(after_block1, study_a):
    colleague = make_user("colleague@example.org")
    StudyMembership.objects.create(user=colleague, study=study_a, role="experimenter")
    client = after_block1.client.__class__()
    client.force_login(colleague)

    assert _import(client, after_block1).status_code == 404
    assert not Transcript.objects.exists()


def test_anonymous_is_sent_to_log_in(after_block1, client_for):
    response = _import(client_for("anonymous"), after_block1)
    assert response.status_code == 302 and "login" in response.url
    assert not Transcript.objects.exists()


def test_a_refusal_says_why_on_the_page_it_came_from(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block1_interaction")

    response = run.client.post(
        reverse("surveys:transcript_import", args=[run.token, 1]),
        {"fmt": "text", "text": EXCHANGE, "next": run.url},
        follow=True,
    )

    assert "still running" in response.content.decode()
    assert not Transcript.objects.exists()


@pytest.mark.parametrize(
    ("payload", "words"),
    [
        ('[{"role": "user", "content": "a\\u0000b"}]', "NUL character"),
        ('[{"role": "user", "content": "a\\ud800b"}]', "not a character"),
        ("[" * 100_000, "nested too deeply"),
        ('[{"role": "user", "content": "a", "n": ' + "9" * 5_000 + "}]", None),
    ],
)
def test_json_the_database_cannot_hold_is_refused_on_the_form(after_block1, payload, words):
    response = _import(after_block1.client, after_block1, fmt="json", text=payload)

    if words is None:  # a long number in a key the import ignores
        assert response.status_code == 302
        assert _turns(Transcript.objects.get()) == [(1, "user", "a")]
        return
    assert response.status_code == 400
    assert words in response.content.decode()
    assert not Transcript.objects.exists()


def test_a_paste_and_a_file_at_once_are_refused_and_the_paste_kept(after_block1):
    upload = SimpleUploadedFile("chat.txt", "User: café".encode("latin-1"), "text/plain")

    response = _import(
        after_block1.client, after_block1, text="User: typed\nAssistant: kept", upload=upload
    )

    assert response.status_code == 400
    page = response.content.decode()
    assert "Paste the transcript or upload a file, not both" in page
    assert "User: typed\nAssistant: kept</textarea>" in page
    assert not Transcript.objects.exists()


def test_a_paste_too_large_to_read_gets_a_page_that_says_so(after_block1, settings):
    # Django refuses the form before any view runs: the 400 page alone can explain.
    text = "User: " + "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE

    response = _import(after_block1.client, after_block1, text=text)

    assert response.status_code == 413
    page = response.content.decode()
    assert "larger than the platform accepts (2.6 MB)" in page
    assert "at most 500,000 characters" in page
    assert not Transcript.objects.exists()


def test_a_form_holding_a_nul_gets_a_page_that_says_so(after_block1):
    response = _import(after_block1.client, after_block1, text="User: a\x00b")

    assert response.status_code == 400
    assert "such as NUL), so nothing was stored" in response.content.decode()
    assert not Transcript.objects.exists()


def test_the_too_large_page_speaks_the_browsers_language(after_block1, settings):
    text = "User: " + "x" * settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    url = reverse("surveys:transcript_import", args=[after_block1.token, 1])

    response = after_block1.client.post(
        url, {"fmt": "text", "text": text}, HTTP_ACCEPT_LANGUAGE="de"
    )

    assert "höchstens 500.000 Zeichen" in response.content.decode()


def test_a_form_error_for_a_block_without_a_form_on_the_page_is_still_shown(after_block1):
    # Block 2 is not reached: the page has no import form to show the error in.
    response = _import(after_block1.client, after_block1, block=2, fmt="docx")

    assert response.status_code == 400
    assert "Select a valid choice. docx is not one of the available choices." in (
        response.content.decode()
    )
    assert not Transcript.objects.exists()


def test_only_a_coordinator_imports_over_a_redaction(after_block1, client_for, personas):
    # Given an imported transcript in which a coordinator redacted the participant's name
    _import(after_block1.client, after_block1, text="User: I am Erika.\nAssistant: Hi.")
    turn = Turn.objects.get(position=1)
    turn_redact(turn_id=turn.pk, user=personas["coordinator_a"], reason="own name")

    # When the experimenter imports the original text again
    response = _import(
        after_block1.client, after_block1, text="User: I am Erika.\nAssistant: Hi.", follow=True
    )

    # Then the redaction stands: only a coordinator, who redacts, may replace it
    assert "Only a coordinator can import it again" in response.content.decode()
    assert _turns(Transcript.objects.get())[0] == (1, "user", "[redacted]")
    assert TurnRedaction.objects.count() == 1
    response = _import(client_for("coordinator_a"), after_block1, text="User: I am [name].")
    assert response.status_code == 302
    assert _turns(Transcript.objects.get()) == [(1, "user", "I am [name].")]


def test_a_parse_error_over_a_redaction_is_shown_to_the_experimenter(after_block1, personas):
    # The page offers the experimenter no import form here, so the error goes above it.
    _import(after_block1.client, after_block1)
    turn_redact(turn_id=Turn.objects.first().pk, user=personas["coordinator_a"], reason="name")

    response = _import(after_block1.client, after_block1, text="Asistant: hi")

    assert response.status_code == 400
    assert "Line 1: unknown role “Asistant”" in response.content.decode()
