"""The protocol variants (docs/design/remote.md §11.5): a naturalistic block is held to a
minimum of messages and of minutes, with no categories; the supervised
experimenter may end it below them with a reason, a remote participant may
not. The two-category protocol shows a remote participant the worked examples."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from surveys.models import Evaluation, InteractionBlock, PromptEntry, Study, Turn
from surveys.protocol.chat import chat_answer_store, chat_ask
from surveys.protocol.chat_tags import chat_turn_tag
from surveys.protocol.state import ProtocolError
from tests.surveys.chat import ANSWER, ChatRun
from tests.surveys.remote import RemoteRun, make_remote_study
from tests.surveys.runner import SessionRun
from tests.surveys.test_chat_answers import stream

STEP = "block1_interaction"
TASK = "Plan a weekend trip to Vienna with the help of the system."
NATURALISTIC = {
    "protocol": Study.Protocol.NATURALISTIC,
    "min_turns": 2,
    "min_minutes": 5,
}
EXAMPLE = "What is the area of Austria?"


def naturalistic(study: Study) -> Study:
    Study.objects.filter(pk=study.pk).update(**NATURALISTIC)
    study.task_texts.update(text=TASK)
    study.refresh_from_db()
    return study


def block_started_ago(session, minutes: float, block: int = 1) -> None:
    """The block opened `minutes` ago (its minutes count from its start)."""
    started = InteractionBlock.objects.get(session=session, block=block).started_at
    InteractionBlock.objects.filter(session=session, block=block).update(
        started_at=started - timedelta(minutes=minutes)
    )


@pytest.fixture
def run(study_a, client_for):
    naturalistic(study_a)
    # Never called here: a message is stored before the system is asked.
    return ChatRun(client_for("experimenter_a"), study_a, "http://127.0.0.1:9/v1")


def ask(run, text="Which museums open on Sundays?") -> Turn:
    call = chat_ask(session_id=run.session.pk, step=STEP, text=text)
    # Answered, as the exchange would: one answer in flight per session.
    chat_answer_store(call=call, reply=ANSWER, started_at=timezone.now())
    return Turn.objects.get(pk=call.user_turn_id)


def test_a_supervised_block_ends_only_when_turns_and_minutes_are_reached(run):
    ask(run)

    refused = run.post(STEP)
    assert refused.status_code == 409
    assert "1 more message" in refused.content.decode()
    assert "5 more minutes" in refused.content.decode()
    assert run.session.step == STEP

    block_started_ago(run.session, 5)
    refused = run.post(STEP)
    assert refused.status_code == 409
    assert "1 more message" in refused.content.decode()
    assert "more minute" not in refused.content.decode()

    ask(run, "And on Mondays?")
    assert run.post(STEP).status_code == 302
    assert run.session.step == "block1_shs"
    assert InteractionBlock.objects.get(session=run.session, block=1).override_reason == ""


def test_enough_messages_before_the_minutes_are_not_enough(run):
    ask(run)
    ask(run, "And on Mondays?")
    block_started_ago(run.session, 4)

    refused = run.post(STEP)

    assert refused.status_code == 409
    assert "1 more minute" in refused.content.decode()
    assert run.session.step == STEP


def test_the_supervised_experimenter_may_end_below_the_minimums_with_a_reason(run):
    assert run.post(STEP, override_reason="The participant felt unwell").status_code == 302

    block = InteractionBlock.objects.get(session=run.session, block=1)
    assert block.override_reason == "The participant felt unwell"
    assert run.session.step == "block1_shs"


def test_an_external_block_is_held_to_its_minutes_its_turns_come_with_the_import(
    study_a, client_for
):
    naturalistic(study_a)
    session_run = SessionRun(client_for("experimenter_a"), study_a)
    session_run.consent()
    session_run.hand_back()

    assert session_run.post(STEP).status_code == 409
    page = session_run.get().content.decode()
    assert "counted from the transcript imported after the block" in page
    block_started_ago(session_run.session, 5)
    assert session_run.post(STEP).status_code == 302


def test_no_category_tagging_in_a_naturalistic_block(run):
    turn = ask(run)

    with pytest.raises(ProtocolError):
        chat_turn_tag(session_id=run.session.pk, step=STEP, turn_id=turn.pk, category="verified")
    assert run.tag(turn, "verified").status_code == 409
    assert run.log_prompt(STEP, "glatteis").status_code == 409
    assert not PromptEntry.objects.filter(interaction__session=run.session).exists()


def test_the_supervised_page_shows_the_task_and_no_categories(run):
    turn = ask(run)

    page = run.get().content.decode()

    assert TASK in page
    assert turn.text in page
    assert reverse("surveys:session_chat_tag", args=[run.token, turn.pk]) not in page
    assert "Verified Knowledge" not in page
    assert EXAMPLE not in page


def test_the_two_category_chat_still_tags(study_a, client_for):
    two = ChatRun(client_for("experimenter_a"), study_a, "http://127.0.0.1:9/v1")
    turn = ask(two)

    page = two.get().content.decode()

    assert reverse("surveys:session_chat_tag", args=[two.token, turn.pk]) in page
    assert EXAMPLE not in page  # the experimenter gives the examples in person
    assert two.tag(turn, "verified").status_code == 302


def test_the_evaluation_keeps_the_protocol_it_was_given_under(run):
    run.post(STEP, override_reason="Test")
    run.get()  # the SHS's first display makes the evaluation

    evaluation = Evaluation.objects.get(session=run.session, block=1)
    assert evaluation.protocol == "naturalistic"
    Study.objects.filter(pk=run.study.pk).update(protocol=Study.Protocol.TWO_CATEGORY)
    evaluation.refresh_from_db()
    assert evaluation.protocol == "naturalistic"


# -- remote --------------------------------------------------------------------------


@pytest.fixture
def remote(db, llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    return naturalistic(make_remote_study(llm_server, slug="remote-natural"))


def test_a_remote_participant_cannot_end_below_the_minimums_even_with_a_reason(remote):
    participant = RemoteRun(remote)
    participant.consent()
    assert participant.send("Which museums open on Sundays?", STEP).status_code == 302
    assert participant.send("And on Mondays?", STEP).status_code == 302

    refused = participant.post(STEP, override_reason="I am in a hurry")
    assert refused.status_code == 409
    assert "5 more minutes" in refused.content.decode()
    assert "withdraw" in refused.content.decode()
    assert participant.session.step == STEP

    block_started_ago(participant.session, 5)
    assert participant.post(STEP).status_code == 302
    assert participant.session.step == "block1_shs"
    assert InteractionBlock.objects.get(session=participant.session, block=1).override_reason == ""


def test_the_remote_page_shows_the_task_and_no_reason_field(remote):
    participant = RemoteRun(remote)
    participant.consent()

    page = participant.get().content.decode()

    assert TASK in page
    assert 'name="override_reason"' not in page
    assert EXAMPLE not in page
    assert "2 more messages" in page


def test_a_remote_two_category_block_shows_the_worked_examples(db, llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    participant = RemoteRun(make_remote_study(llm_server, slug="remote-two"))
    participant.consent()

    page = participant.get().content.decode()

    assert EXAMPLE in page
    assert "Alistair Finch" in page
    assert page.index(EXAMPLE) < page.index('id="chat"')
    assert TASK not in page


def test_the_worked_examples_are_in_the_participants_language(db, llm_server, settings):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    study = make_remote_study(llm_server, slug="remote-de")
    participant = RemoteRun(study, language="de")
    participant.consent()

    page = participant.get().content.decode()

    assert "Wie groß ist die Fläche Österreichs?" in page


# -- the study's settings ----------------------------------------------------------


def _edit(client, study, **fields):
    from tests.surveys.test_studies import _study_form

    data = _study_form(title=study.title, slug=study.slug, languages=study.languages, **fields)
    return client.post(reverse("surveys:study_edit", args=[study.slug]), data)


def test_the_coordinator_chooses_the_naturalistic_protocol(study_a, client_for):
    coordinator = client_for("coordinator_a")

    _edit(coordinator, study_a, protocol="naturalistic", min_turns=4)

    study_a.refresh_from_db()
    assert (study_a.protocol, study_a.min_turns) == ("naturalistic", 4)


def test_the_protocol_cannot_change_once_data_is_collected(study_a, client_for, make_session):
    make_session()
    coordinator = client_for("coordinator_a")

    response = _edit(coordinator, study_a, protocol="naturalistic")

    assert "The protocol cannot change" in response.content.decode()
    study_a.refresh_from_db()
    assert study_a.protocol == "two_category"
    # Other settings still change; the protocol left as it is is no change.
    _edit(coordinator, study_a, protocol="two_category", speeding_seconds=30)
    study_a.refresh_from_db()
    assert study_a.speeding_seconds == 30


def test_pilot_sessions_do_not_hold_the_protocol(study_a, client_for, make_session):
    make_session(is_pilot=True)

    _edit(client_for("coordinator_a"), study_a, protocol="naturalistic")

    study_a.refresh_from_db()
    assert study_a.protocol == "naturalistic"


def test_a_streamed_answer_brings_its_message_without_tag_buttons(
    study_a, client_for, llm_server, settings
):
    settings.LLM_ALLOW_HTTP_LOOPBACK = True
    naturalistic(study_a)
    streamed = ChatRun(client_for("experimenter_a"), study_a, llm_server)

    lines = stream(streamed, "Which museums open on Sundays?")

    stored = lines[-1]["stored"]["turns"]
    assert "Which museums open on Sundays?" in stored
    assert "tag-form" not in stored
