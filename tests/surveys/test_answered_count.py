"""The messages that got an answer, counted by the export's one query
(surveys.selection.answered) as the chat page counts them
(surveys.protocol.variants.answered_turns): a failed message counts for
nothing in the too-few-turns flag either (docs/design/remote.md §11.5)."""

import pytest
from django.utils import timezone

from surveys.models import Transcript, Turn
from surveys.protocol.chat import chat_answer_store, chat_ask, chat_failure_store, chat_retry
from surveys.protocol.variants import answered_turns
from surveys.selection import answered
from tests.surveys.chat import ANSWER, ChatRun

STEP = "block1_interaction"


@pytest.fixture
def run(study_a, client_for):
    # Never called: the address only makes the system connected.
    return ChatRun(client_for("experimenter_a"), study_a, "http://127.0.0.1:9/v1")


def ask(run, text="A question"):
    call = chat_ask(session_id=run.session.pk, step=STEP, text=text)
    chat_answer_store(call=call, reply=ANSWER, started_at=timezone.now())


def fail(run, text="A question the system fails on"):
    call = chat_ask(session_id=run.session.pk, step=STEP, text=text)
    chat_failure_store(call=call, cause="server_error", partial_text="", started_at=timezone.now())


def counted_by_query(transcript) -> int:
    return Turn.objects.filter(answered(), role=Turn.Role.USER, transcript=transcript).count()


def test_the_query_counts_what_the_chat_counts(run):
    ask(run)
    fail(run)  # left without an answer: a new message replaces it
    ask(run)
    fail(run)
    chat_answer_store(
        call=chat_retry(session_id=run.session.pk, step=STEP),
        reply=ANSWER,
        started_at=timezone.now(),
    )  # answered on the retry
    fail(run)  # the last one stays unanswered
    transcript = Transcript.objects.get(interaction__session=run.session)

    assert Turn.objects.filter(transcript=transcript, role=Turn.Role.USER).count() == 5
    assert answered_turns(transcript.interaction) == 3
    assert counted_by_query(transcript) == 3


@pytest.mark.parametrize(
    ("roles", "expected"),
    [
        # Answers that name no question: imported, or stored before answers did.
        (["user", "assistant", "user", "assistant"], 2),
        (["user", "user", "assistant"], 1),  # the first got none
        (["user", "error", "assistant"], 1),  # answered after an error
        (["user", "assistant", "user"], 1),  # the last got none
        (["system", "user", "assistant", "assistant", "user", "error"], 1),
    ],
)
def test_answers_that_name_no_question_answer_the_message_before_them(run, roles, expected):
    ask(run)  # makes the transcript; its turns are replaced below
    transcript = Transcript.objects.get(interaction__session=run.session)
    transcript.turns.all().delete()
    Turn.objects.bulk_create(
        Turn(transcript=transcript, position=position, role=role, text=f"turn {position}")
        for position, role in enumerate(roles)
    )

    assert answered_turns(transcript.interaction) == expected
    assert counted_by_query(transcript) == expected


def test_the_too_few_turns_flag_reads_the_answered_messages(run):
    from surveys.models import Evaluation
    from surveys.selection import block_activity

    ask(run)
    fail(run)
    evaluation = Evaluation.objects.create(session=run.session, block=1, system=run.system)

    activity = (
        Evaluation.objects.filter(pk=evaluation.pk)
        .annotate(**block_activity(timezone.now()))
        .values("user_turns", "has_transcript")
        .get()
    )
    assert activity == {"user_turns": 1, "has_transcript": True}
