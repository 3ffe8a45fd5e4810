"""A coordinator's redaction of a turn (docs/design/transcripts.md §10.2): the text is
replaced, who, when and why are recorded, and the old text is kept nowhere."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from surveys.models import Participant, PromptEntry, StudyMembership, Turn, TurnRedaction
from surveys.protocol.state import ProtocolError
from surveys.protocol.transcripts import REDACTED, turn_redact
from surveys.steps import Step
from tests.personas import make_user
from tests.surveys.transcript_data import ended_block, stored_transcript

OWN_NAME = "question 1"  # the first user turn's text, and its prompt-log entry's


@pytest.fixture
def session(make_session):
    session = make_session(step=Step.COMPLETE)
    stored_transcript(ended_block(session, 1), turns=4)
    return session


@pytest.fixture
def first_turn(session):
    return Turn.objects.get(transcript__interaction__session=session, position=1)


def _database_dump() -> str:
    out = StringIO()
    call_command("dumpdata", stdout=out)
    return out.getvalue()


def _redact(client, session, turn, **data):
    url = reverse("surveys:transcript_turn_redact", args=[session.token, turn.pk])
    return client.post(url, data)


def test_a_coordinator_redacts_a_turn(session, first_turn, client_for, personas):
    assert OWN_NAME in _database_dump()
    before = timezone.now()

    response = _redact(client_for("coordinator_a"), session, first_turn, reason="typed own name")

    assert response.status_code == 302
    first_turn.refresh_from_db()
    assert first_turn.text == REDACTED
    redaction = TurnRedaction.objects.get()
    assert redaction.turn == first_turn
    assert redaction.redacted_by == personas["coordinator_a"]
    assert redaction.redacted_at >= before
    assert redaction.reason == "typed own name"
    # Not in the turn, not in the audit, not in the prompt-log entry the turn is.
    assert PromptEntry.objects.get(pk=first_turn.prompt_id).text == REDACTED
    assert OWN_NAME not in _database_dump()


def test_a_replacement_text(first_turn, personas):
    turn_redact(
        turn_id=first_turn.pk,
        user=personas["coordinator_a"],
        reason="name",
        replacement="question [name]",
    )
    first_turn.refresh_from_db()
    assert first_turn.text == "question [name]"


def test_the_page_shows_the_marker_in_the_readers_language_and_the_audit(
    session, first_turn, client_for
):
    client = client_for("coordinator_a")
    _redact(client, session, first_turn, reason="typed own name")
    page_url = reverse("surveys:session_transcripts", args=[session.token])

    english = client.get(page_url).content.decode()
    german = client.get(page_url, HTTP_ACCEPT_LANGUAGE="de").content.decode()

    assert "[redacted by the coordinator]" in english
    assert "coord-a@example.org: “typed own name”" in english
    assert 'class="badge warning">redacted<' in english
    assert "[von der Koordination geschwärzt]" in german
    # The reason is kept and shown: the form asks not to quote the redacted text in it.
    assert "Do not quote what you take out" in english


@pytest.mark.parametrize("reason", ["", "   ", "x" * 501])
def test_a_redaction_needs_a_reason(session, first_turn, client_for, reason):
    url = reverse("surveys:transcript_turn_redact", args=[session.token, first_turn.pk])
    response = client_for("coordinator_a").post(url, {"reason": reason}, follow=True)

    assert "needs a reason of at most 500 characters" in response.content.decode()
    first_turn.refresh_from_db()
    assert first_turn.text == OWN_NAME
    assert not TurnRedaction.objects.exists()


def test_the_experimenter_cannot_redact(session, first_turn, client_for, personas):
    response = _redact(client_for("experimenter_a"), session, first_turn, reason="x")
    assert response.status_code == 404

    with pytest.raises(ProtocolError, match="Only a coordinator"):
        turn_redact(turn_id=first_turn.pk, user=personas["experimenter_a"], reason="x")
    first_turn.refresh_from_db()
    assert first_turn.text == OWN_NAME
    assert not TurnRedaction.objects.exists()


@pytest.mark.parametrize("persona", ["coordinator_b", "outsider"])
def test_other_studies_get_a_404(session, first_turn, client_for, personas, persona):
    assert _redact(client_for(persona), session, first_turn, reason="x").status_code == 404
    with pytest.raises(ProtocolError):
        turn_redact(turn_id=first_turn.pk, user=personas[persona], reason="x")
    assert not TurnRedaction.objects.exists()


def test_a_turn_of_another_session_is_a_404(session, make_session, client_for):
    other = make_session(step=Step.COMPLETE)
    foreign = stored_transcript(ended_block(other, 1), turns=2).turns.first()

    assert _redact(client_for("coordinator_a"), session, foreign, reason="x").status_code == 404
    assert not TurnRedaction.objects.exists()


def test_redacting_again_to_the_same_text_is_refused(first_turn, personas):
    turn_redact(turn_id=first_turn.pk, user=personas["coordinator_a"], reason="name")
    with pytest.raises(ProtocolError, match="already"):
        turn_redact(turn_id=first_turn.pk, user=personas["coordinator_a"], reason="again")
    assert TurnRedaction.objects.count() == 1


def test_a_turn_of_another_study_is_a_404_for_its_own_coordinator_too(
    session, first_turn, make_session, study_b, personas, client_for
):
    # The session in the URL is coordinator A's; the turn is study B's.
    systems = list(study_b.systems.all()[:2])
    foreign_session = make_session(
        study=study_b,
        participant=Participant.objects.create(study=study_b),
        first_system=systems[0],
        second_system=systems[1],
        step=Step.COMPLETE,
    )
    foreign = stored_transcript(ended_block(foreign_session, 1), turns=2).turns.first()

    assert _redact(client_for("coordinator_a"), session, foreign, reason="x").status_code == 404
    assert _redact(client_for("coordinator_b"), session, foreign, reason="x").status_code == 404
    assert not TurnRedaction.objects.exists()


def test_another_experimenter_of_the_study_neither_sees_nor_redacts(session, first_turn, study_a):
    colleague = make_user("colleague@example.org")
    StudyMembership.objects.create(user=colleague, study=study_a, role="experimenter")
    client = Client()
    client.force_login(colleague)

    page = client.get(reverse("surveys:session_transcripts", args=[session.token]))
    assert page.status_code == 404
    assert _redact(client, session, first_turn, reason="x").status_code == 404
    assert not TurnRedaction.objects.exists()


def test_writing_needs_a_post_with_the_csrf_token(session, first_turn, personas):
    client = Client(enforce_csrf_checks=True)
    client.force_login(personas["coordinator_a"])
    redact_url = reverse("surveys:transcript_turn_redact", args=[session.token, first_turn.pk])
    import_url = reverse("surveys:transcript_import", args=[session.token, 1])

    assert client.get(redact_url, {"reason": "x"}).status_code == 405
    assert client.get(import_url).status_code == 405
    assert client.post(redact_url, {"reason": "x"}).status_code == 403
    assert client.post(import_url, {"fmt": "text", "text": "User: a"}).status_code == 403
    first_turn.refresh_from_db()
    assert first_turn.text == OWN_NAME
    assert not TurnRedaction.objects.exists()


def test_the_admin_cannot_change_a_turn_past_the_audit(session, client):
    """Not registered there (surveys/admin.py): a redaction is the one way to change a turn."""
    from surveys.models import User

    superuser = User.objects.create_superuser(email="root@example.org", password="x")
    client.force_login(superuser)
    for model in ("transcript", "turn", "turnredaction"):
        assert client.get(f"/admin/surveys/{model}/").status_code == 404


def test_a_turn_without_text_is_not_redacted(session, personas):
    # The page offers no form for it; a crafted request is refused all the same.
    error_turn = Turn.objects.get(transcript__interaction__session=session, role="error")

    with pytest.raises(ProtocolError, match="no text"):
        turn_redact(turn_id=error_turn.pk, user=personas["coordinator_a"], reason="x")
    error_turn.refresh_from_db()
    assert error_turn.text == ""
    assert not TurnRedaction.objects.exists()
