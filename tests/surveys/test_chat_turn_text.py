"""A turn's whole text (docs/design/transcripts.md §10.3, long turns on pages): the session's
participant and the study's staff reach it; nobody else, and the system prompt
is the staff's only."""

from django.test import Client
from django.urls import reverse

from surveys.models import Transcript, Turn
from tests.surveys.remote import RemoteRun, make_remote_study


def _turns(run):
    block = run.session.blocks.get(block=1)
    transcript = Transcript.objects.create(interaction=block, source=Transcript.Source.CHAT)
    system = Turn.objects.create(transcript=transcript, position=0, role="system", text="Secret.")
    user = Turn.objects.create(transcript=transcript, position=1, role="user", text="Hi")
    answer = Turn.objects.create(
        transcript=transcript, position=2, role="assistant", text="x" * 25_000 + "END"
    )
    return system, user, answer


def _url(run, turn):
    return reverse("surveys:session_turn_text", args=[run.token, turn.pk])


def test_the_participant_reads_a_long_answer_whole_and_the_page_folds_it(db):
    study = make_remote_study("http://127.0.0.1:9/v1")
    run = RemoteRun(study)
    run.consent()
    _system, _user, answer = _turns(run)

    whole = run.client.get(_url(run, answer))
    page = run.client.get(run.url).content.decode()

    assert whole.status_code == 200 and whole.content.decode() == answer.text
    assert whole["Content-Type"].startswith("text/plain")
    assert "sandbox" in whole["Content-Security-Policy"]
    assert _url(run, answer) in page and "END" not in page


def test_the_system_prompt_and_other_sessions_turns_are_not_the_participants(db):
    study = make_remote_study("http://127.0.0.1:9/v1")
    run, other = RemoteRun(study), RemoteRun(study, client=Client())
    run.consent()
    system, user, _answer = _turns(run)

    assert run.client.get(_url(run, system)).status_code == 404
    assert run.client.get(_url(run, user)).status_code == 200
    # Another participant, with their own cookie, asking for this session's turn.
    assert other.client.get(_url(run, user)).status_code in (302, 404)
    assert other.client.get(_url(other, user)).status_code == 404
