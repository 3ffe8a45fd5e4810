"""Where transcripts are shown (the coordinator's session record, the
experimenter's pages), what each page costs, the participant's warning about
personal data, and that withdrawal and erasure delete transcripts
(docs/design/transcripts.md §10.2)."""

import logging
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from surveys.models import PromptEntry, Transcript, Turn, TurnRedaction
from surveys.steps import Step
from tests.surveys.runner import SessionRun
from tests.surveys.transcript_data import ended_block, stored_transcript

EXCHANGE = "User: My name is Erika Mustermann.\nAssistant: Hello Erika."


def _record_url(session):
    return reverse("surveys:session_record", args=[session.study.slug, session.token])


def _two_blocks(make_session, personas, turns):
    session = make_session(step=Step.COMPLETE)
    for block in (1, 2):
        stored_transcript(
            ended_block(session, block), turns=turns, redacted_by=personas["coordinator_a"]
        )
    return session


def test_the_session_record_shows_every_turn_and_what_the_api_reported(
    make_session, personas, client_for
):
    session = _two_blocks(make_session, personas, turns=4)

    page = client_for("coordinator_a").get(_record_url(session)).content.decode()

    for code in Transcript.objects.values_list("code", flat=True):
        assert f"<code>{code}</code>" in page
    assert "answer 2" in page and "question 3" in page
    assert "first token 412 ms" in page and "answer 2950 ms" in page
    assert "tokens 31 in / 87 out" in page and "demo-model-1" in page and "stop" in page
    assert '<span class="badge danger">timeout</span>' in page  # the error turn's cause
    assert '<span class="badge">Glatteis (trap)</span>' in page  # a user turn's prompt-log tag
    assert page.count('class="badge warning">redacted<') == 2
    assert page.count("Redacted on ") == 2
    assert page.count('name="reason"') == 6  # a redaction form per turn with text


@pytest.mark.parametrize("url_of", [_record_url, lambda s: f"/sessions/{s.token}/transcripts/"])
def test_pages_cost_the_same_for_2_and_10_turns(make_session, personas, client_for, url_of):
    client = client_for("coordinator_a")
    counts = []
    for turns in (2, 10):
        session = _two_blocks(make_session, personas, turns)
        client.get(url_of(session))  # the Django session's first rows are not the page's
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url_of(session)).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


@pytest.mark.parametrize(
    ("persona", "status"),
    [
        ("coordinator_a", 200),
        ("experimenter_a", 200),
        ("coordinator_b", 404),
        ("outsider", 404),
        ("anonymous", 302),
    ],
)
def test_who_reaches_the_transcripts_page(make_session, personas, client_for, persona, status):
    session = _two_blocks(make_session, personas, turns=2)
    response = client_for(persona).get(f"/sessions/{session.token}/transcripts/")
    assert response.status_code == status
    if status == 302:
        assert response.url.startswith(reverse("account_login"))


def test_the_experimenter_sees_them_on_the_feedback_page(make_session, personas, client_for):
    session = _two_blocks(make_session, personas, turns=4)
    session.step = Step.FEEDBACK
    session.save()

    page = client_for("experimenter_a").get(f"/sessions/{session.token}/").content.decode()

    assert "Transcripts" in page and "answer 2" in page
    assert "[redacted by the coordinator]" in page
    assert 'name="reason"' not in page  # redaction is the coordinator's
    # The chat recorded these: no import could replace them, so none is offered.
    assert "Import again" not in page


def test_block_2s_interaction_page_offers_block_1s_import(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block2_interaction")
    run.hand_back()

    page = run.get().content.decode()

    assert "Import the transcript" in page
    assert reverse("surveys:transcript_import", args=[run.token, 1]) in page
    assert reverse("surveys:transcript_import", args=[run.token, 2]) not in page


def test_the_experimenter_reaches_them_from_the_study_page_after_the_session(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.complete()

    page = run.client.get(reverse("surveys:study_detail", args=[study_a.slug])).content.decode()

    transcripts = reverse("surveys:session_transcripts", args=[run.token])
    assert transcripts in page
    assert "Import the transcript" in run.client.get(transcripts).content.decode()


def test_running_blocks_show_no_section(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block1_interaction")
    assert 'id="transcripts"' not in run.get().content.decode()


@pytest.mark.parametrize(
    ("language", "words"),
    [
        ("en", "do not type any personal data"),
        ("de", "keine persönlichen Daten"),
        ("fr", "aucune donnée personnelle"),
    ],
)
def test_the_consent_page_warns_against_personal_data(study_a, client_for, language, words):
    run = SessionRun(client_for("experimenter_a"), study_a, language=language)
    assert words in run.get().content.decode()


# -- withdrawal and erasure -------------------------------------------------------------


def _dump() -> str:
    out = StringIO()
    call_command("dumpdata", stdout=out)
    return out.getvalue()


def _assert_gone():
    assert not Transcript.objects.exists()
    assert not Turn.objects.exists()
    assert not TurnRedaction.objects.exists()
    assert not PromptEntry.objects.exists()
    assert "Erika" not in _dump()


def _import_and_redact(run, coordinator_client, block):
    run.client.post(
        reverse("surveys:transcript_import", args=[run.token, block]),
        {"fmt": "text", "text": EXCHANGE},
    )
    turn = Turn.objects.get(transcript__interaction__block=block, position=1)
    coordinator_client.post(
        reverse("surveys:transcript_turn_redact", args=[run.token, turn.pk]),
        {"reason": "own name", "replacement": "My name is [name]."},
    )
    assert TurnRedaction.objects.filter(turn=turn).exists()


def test_withdrawal_deletes_the_transcripts(study_a, client_for, caplog):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.advance_to("block2_interaction")
    _import_and_redact(run, client_for("coordinator_a"), block=1)

    with caplog.at_level(logging.DEBUG):
        run.client.post(reverse("surveys:session_withdraw", args=[run.token]))

    assert run.session.step == Step.WITHDRAWN
    _assert_gone()
    assert "Erika" not in caplog.text


def test_erasure_on_request_deletes_the_transcripts(study_a, client_for, caplog):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.complete()
    coordinator = client_for("coordinator_a")
    for block in (1, 2):
        _import_and_redact(run, coordinator, block)
    code = run.session.participant.code

    with caplog.at_level(logging.DEBUG):
        coordinator.post(
            reverse("surveys:session_erase", args=[study_a.slug, run.token]),
            {"participant_code": code},
        )

    assert run.session.step == Step.WITHDRAWN
    _assert_gone()
    assert "Erika" not in caplog.text


def test_turn_text_is_escaped_and_keeps_its_lines(make_session, personas, client_for):
    session = _two_blocks(make_session, personas, turns=4)
    typed = '<script>alert("x")</script>\n  <b>indented</b> & more'
    Turn.objects.filter(transcript__interaction__block=1, position=2).update(text=typed)

    page = client_for("coordinator_a").get(_record_url(session)).content.decode()

    assert "<script>alert" not in page and "<b>indented" not in page
    assert (
        '<div class="turn-text" dir="auto">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\n'
        "  &lt;b&gt;indented&lt;/b&gt; &amp; more</div>"
    ) in page


def test_erasure_deletes_a_chat_transcript_whose_turns_are_prompt_log_entries(
    make_session, personas
):
    from surveys.protocol.curation import session_erase_on_request

    session = make_session(step=Step.COMPLETE)
    coordinator = personas["coordinator_a"]
    transcript = stored_transcript(ended_block(session, 1), turns=6, redacted_by=coordinator)
    # A prompt-log entry taken back leaves its turn in the transcript, untagged.
    untagged = transcript.turns.get(position=3)
    PromptEntry.objects.filter(pk=untagged.prompt_id).delete()
    untagged.refresh_from_db()
    assert (untagged.prompt, untagged.text) == (None, "question 3")

    session_erase_on_request(
        session_id=session.pk, participant_code=session.participant.code, erased_by=coordinator
    )

    _assert_gone()
    dump = _dump()
    assert "question 3" not in dump and "answer 2" not in dump


@pytest.mark.parametrize(
    ("persona", "redacted", "offered"),
    [
        ("experimenter_a", False, True),
        ("experimenter_a", True, False),  # the import would bring the redacted text back
        ("coordinator_a", True, True),
    ],
)
def test_import_again_is_offered_where_it_would_be_taken(
    make_session, personas, client_for, persona, redacted, offered
):
    session = make_session(step=Step.COMPLETE)
    transcript = stored_transcript(
        ended_block(session, 1),
        turns=2,
        redacted_by=personas["coordinator_a"] if redacted else None,
    )
    Transcript.objects.filter(pk=transcript.pk).update(source="import", import_format="text")

    page = client_for(persona).get(f"/sessions/{session.token}/transcripts/").content.decode()

    assert ("Import again" in page) == offered
