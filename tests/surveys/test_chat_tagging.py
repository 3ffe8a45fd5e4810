"""Tagging the chat's messages: a tagged user turn is the block's prompt-log entry,
made and removed by the prompt service, so the minimums and the override rule
hold unchanged (docs/design/transcripts.md §10.3). No call to a system is needed here: a
message is stored before the system is asked."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from surveys.models import PromptEntry, Turn
from surveys.protocol.chat import chat_answer_store, chat_ask, chat_failure_store, chat_retry
from surveys.protocol.chat_tags import chat_turn_tag, chat_turn_untag
from surveys.protocol.state import ProtocolError, WrongStep
from tests.surveys.chat import ANSWER, ChatRun

STEP = "block1_interaction"


@pytest.fixture
def run(study_a, client_for):
    # Never called in these tests: the address only makes the system connected.
    return ChatRun(client_for("experimenter_a"), study_a, "http://127.0.0.1:9/v1")


def ask(run, text="What is the capital of Australia?") -> Turn:
    call = chat_ask(session_id=run.session.pk, step=STEP, text=text)
    # Answered, as the exchange would: one answer in flight per session.
    chat_answer_store(call=call, reply=ANSWER, started_at=timezone.now())
    return Turn.objects.get(pk=call.user_turn_id)


def log(run):
    return list(PromptEntry.objects.filter(interaction__session=run.session))


def test_the_first_message_makes_the_transcript_with_the_system_prompt_first(run):
    run.system.__class__.objects.filter(pk=run.system.pk).update(system_prompt="Be brief.")

    ask(run, "  First question  ")
    ask(run, "Second question")

    transcript = run.transcript()
    assert transcript.source == "chat"
    assert [(t.position, t.role, t.text) for t in run.turns()] == [
        (0, "system", "Be brief."),
        (1, "user", "First question"),
        (2, "assistant", "An answer."),
        (3, "user", "Second question"),
        (4, "assistant", "An answer."),
    ]
    assert all(t.started_at and t.completed_at for t in run.turns() if t.role == "user")


def test_a_tag_makes_one_prompt_entry_through_the_prompt_service(run):
    turn = ask(run)

    response = run.tag(turn, "glatteis", is_source_request=True)

    assert response.status_code == 302
    (entry,) = log(run)
    assert (entry.category, entry.is_source_request, entry.is_follow_up) == (
        "glatteis",
        True,
        False,
    )
    assert entry.text == ""  # the text is the turn's (a redaction covers both)
    turn.refresh_from_db()
    assert turn.prompt == entry


def test_tagging_again_changes_the_same_entry_and_never_adds_a_second(run):
    turn = ask(run)
    run.tag(turn, "verified", is_challenge=True)
    (first,) = log(run)

    run.tag(turn, "verified", is_challenge=True)  # a second click
    run.tag(turn, "glatteis", is_follow_up=True)  # a change of mind

    (entry,) = log(run)
    assert entry.pk == first.pk and entry.created_at == first.created_at
    assert (entry.category, entry.is_follow_up, entry.is_challenge) == ("glatteis", True, False)


def test_untagging_removes_the_entry_and_keeps_the_message(run):
    turn = ask(run)
    run.tag(turn, "verified")

    response = run.untag(turn)

    assert response.status_code == 302
    assert log(run) == []
    turn.refresh_from_db()
    assert turn.prompt is None and turn.text == "What is the capital of Australia?"
    assert run.untag(turn).status_code == 409  # nothing left to remove


def test_the_minimums_count_the_tagged_messages(run):
    turns = [ask(run, f"Question {n}") for n in range(6)]
    for turn in turns[:3]:
        run.tag(turn, "verified")
    for turn in turns[3:5]:
        run.tag(turn, "glatteis")

    refused = run.post(STEP)
    assert refused.status_code == 409  # one Glatteis prompt short, no reason given
    assert run.session.step == STEP

    run.tag(turns[5], "glatteis")
    assert run.post(STEP).status_code == 302
    assert run.session.step == "block1_shs"


def test_the_override_rule_holds_for_a_chat_block(run):
    run.tag(ask(run), "verified")

    response = run.post(STEP, override_reason="The participant had to leave early.")

    assert response.status_code == 302
    assert run.session.blocks.get(block=1).override_reason.startswith("The participant")


def test_a_tag_naming_another_step_is_refused_and_changes_nothing(run):
    turn = ask(run)

    with pytest.raises(WrongStep):
        chat_turn_tag(
            session_id=run.session.pk,
            step="block2_interaction",
            turn_id=turn.pk,
            category="verified",
        )
    assert run.tag(turn, "verified", step="block1_shs").status_code == 409
    assert log(run) == []


def test_a_tag_after_the_block_ended_is_refused(run):
    turn = ask(run)
    run.post(STEP, override_reason="ended")

    assert run.tag(turn, "verified", step=STEP).status_code == 409
    with pytest.raises(ProtocolError):
        chat_turn_untag(session_id=run.session.pk, step="block1_shs", turn_id=turn.pk)
    assert log(run) == []


def test_only_the_blocks_own_user_turns_can_be_tagged(run, make_session):
    question = ask(run)
    answer = Turn.objects.create(transcript=question.transcript, position=99, role="assistant")

    assert run.tag(answer, "verified").status_code == 409
    with pytest.raises(ProtocolError):
        chat_turn_tag(session_id=run.session.pk, step=STEP, turn_id=10**9, category="verified")
    assert log(run) == []


def fail(run, text="Tell me about the Glatteis bridge") -> Turn:
    call = chat_ask(session_id=run.session.pk, step=STEP, text=text)
    # The system failed: an error turn, as the exchange stores it.
    chat_failure_store(call=call, cause="server_error", partial_text="", started_at=timezone.now())
    return Turn.objects.get(pk=call.user_turn_id)


def tag_url(run, turn) -> str:
    return reverse("surveys:session_chat_tag", args=[run.token, turn.pk])


def test_a_message_without_an_answer_cannot_be_tagged(run):
    failed = fail(run)

    response = run.tag(failed, "verified", is_follow_up=True)

    assert response.status_code == 409
    assert "got no answer from the system, so it cannot be tagged" in response.content.decode()
    with pytest.raises(ProtocolError):
        chat_turn_tag(session_id=run.session.pk, step=STEP, turn_id=failed.pk, category="glatteis")
    assert log(run) == []
    failed.refresh_from_db()
    assert failed.prompt_id is None
    page = run.get().content.decode()
    assert tag_url(run, failed) not in page
    assert "This message has no answer, so it cannot be tagged." in page
    assert reverse("surveys:session_chat_retry", args=[run.token]) in page


def test_a_message_whose_answer_is_still_coming_cannot_be_tagged(run):
    call = chat_ask(session_id=run.session.pk, step=STEP, text="A long answer, please")

    assert run.tag(Turn.objects.get(pk=call.user_turn_id), "verified").status_code == 409
    assert log(run) == []


def test_a_retried_message_can_be_tagged_once_answered(run):
    failed = fail(run)

    call = chat_retry(session_id=run.session.pk, step=STEP)
    chat_answer_store(call=call, reply=ANSWER, started_at=timezone.now())

    assert run.tag(failed, "verified").status_code == 302
    (entry,) = log(run)
    failed.refresh_from_db()
    assert failed.prompt == entry


def test_a_new_message_leaves_the_failed_one_out_and_untaggable(run):
    """The chat's rule for an unanswered message: a new message may follow,
    and replaces it in the conversation; the failed one stays in the
    transcript, is never retried nor tagged."""
    failed = fail(run)

    call = chat_ask(session_id=run.session.pk, step=STEP, text="Another question")
    assert failed.text not in [message["content"] for message in call.messages]
    chat_answer_store(call=call, reply=ANSWER, started_at=timezone.now())
    new = Turn.objects.get(pk=call.user_turn_id)

    assert run.tag(failed, "verified").status_code == 409
    assert run.tag(new, "verified").status_code == 302
    page = run.get().content.decode()
    assert tag_url(run, failed) not in page and tag_url(run, new) in page
    assert reverse("surveys:session_chat_retry", args=[run.token]) not in page
    assert failed.text in page  # what was typed stays on the page


CHAT_URLS = ["session_chat", "session_chat_retry", "session_chat_tag", "session_chat_untag"]


@pytest.mark.parametrize("name", CHAT_URLS)
@pytest.mark.parametrize(
    ("persona", "expected"),
    [
        ("experimenter_a", {302, 409}),
        ("coordinator_a", {302, 409}),
        ("coordinator_b", {404}),
        ("outsider", {404}),
        ("anonymous", {302}),
    ],
)
def test_only_the_studys_members_reach_the_chat(run, client_for, name, persona, expected):
    turn = ask(run)
    args = [run.token, turn.pk] if name.endswith("tag") else [run.token]
    before = [(t.pk, t.role, t.prompt_id) for t in run.turns()]

    response = client_for(persona).post(
        reverse(f"surveys:{name}", args=args), {"step": STEP, "text": "Hi", "category": "verified"}
    )

    assert response.status_code in expected
    if persona == "anonymous":
        assert response.url.startswith(reverse("account_login"))
    if persona in ("coordinator_b", "outsider", "anonymous"):
        assert [(t.pk, t.role, t.prompt_id) for t in run.turns()] == before
        assert log(run) == []


def test_an_empty_or_too_long_message_is_refused_and_nothing_is_stored(run):
    assert run.send("   ").status_code == 409
    assert run.send("x" * 8001).status_code == 409
    assert run.turns() == []


def test_an_external_blocks_chat_is_refused(study_a, client_for):
    run = ChatRun(client_for("experimenter_a"), study_a, "http://127.0.0.1:9/v1")
    run.system.__class__.objects.filter(pk=run.system.pk).update(kind="external")

    with pytest.raises(ProtocolError):
        chat_ask(session_id=run.session.pk, step=STEP, text="Hello")
    assert run.send("Hello").status_code == 409
    assert run.turns() == []


def test_the_page_shows_the_chat_not_the_prompt_form_and_counts_tags(run):
    def page_queries():
        with CaptureQueriesContext(connection) as queries:
            response = run.get()
        return response.content.decode(), len(queries)

    run.tag(ask(run, "Question 0"), "glatteis", is_follow_up=True)
    _page, few = page_queries()
    for n in range(1, 12):
        turn = ask(run, f"Question {n}")
        if n % 2:
            run.tag(turn, "glatteis", is_follow_up=True)

    page, many = page_queries()

    # The turns and their tags in one query, however many there are.
    assert many == few
    assert 'id="chat"' in page and "Question 11" in page
    assert 'id="prompt-form"' not in page
    assert '<td class="num" id="count-glatteis">7</td>' in page
