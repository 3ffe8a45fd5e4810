"""The chat page's counters follow each answer (docs/design/transcripts.md §10.3,
docs/design/remote.md §11.5): the stream's last line brings the block's
messages, minutes and what it still lacks, for the page's script; without
JavaScript the page the form comes back to shows the same. Only answered
messages count: a message whose call failed is not part of the
conversation until a retry answers it."""

import json
import re

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient
from django.urls import reverse

from tests.surveys.chat import ChatRun
from tests.surveys.remote import RemoteRun, make_remote_study
from tests.surveys.test_chat_answers import STREAM, stream
from tests.surveys.test_protocol_variants import NATURALISTIC, block_started_ago, naturalistic

STEP = "block1_interaction"
FAILING = "Which museums open on Sundays? [500]"


@pytest.fixture(autouse=True)
def quick_failures(settings):
    settings.LLM_MAX_RETRIES = 0
    settings.LLM_ALLOW_HTTP_LOOPBACK = True


@pytest.fixture
def run(study_a, client_for, llm_server):
    naturalistic(study_a)
    return ChatRun(client_for("experimenter_a"), study_a, llm_server)


def progress(events) -> dict:
    return events[-1]["stored"]["progress"]


def counted(html: str) -> tuple[str, str]:
    """The page's "Messages" and "Minutes" counters."""
    turns = re.search(r'id="count-turns"[^>]*>([^<]*)<', html).group(1)
    minutes = re.search(r'id="count-minutes"[^>]*>([^<]*)<', html).group(1)
    return turns, minutes


def test_each_streamed_answer_brings_the_blocks_counters(run):
    first = stream(run, "Which museums open on Sundays?")

    assert progress(first) == {
        "turns": "1",
        "minutes": "0",
        "missing": "Still needed: 1 more message, 5 more minutes.",
    }

    block_started_ago(run.session, 4.5)
    second = stream(run, "And on Mondays?")

    assert progress(second) == {
        "turns": "2",
        "minutes": "4",
        "missing": "Still needed: 1 more minute.",
    }
    block_started_ago(run.session, 1)
    assert progress(stream(run, "And on Tuesdays?"))["missing"] == ""


def test_a_failed_message_does_not_count_until_a_retry_answers_it(run):
    failed = stream(run, FAILING)

    assert failed[-1]["cause"] == "server_error"
    assert progress(failed)["turns"] == "0"
    assert counted(run.get().content.decode()) == ("0", "0")
    assert run.post(STEP).status_code == 409  # the minimum counts answered messages

    # The demo server fails on the marker every time: the block moves on
    # with a new message, and the failed one stays uncounted.
    answered = stream(run, "Which museums open on Mondays?")
    assert progress(answered)["turns"] == "1"


def test_a_remote_participants_counters_are_in_their_language(db, llm_server):
    study = make_remote_study(llm_server, slug="remote-de", **NATURALISTIC)
    participant = RemoteRun(study, language="de")
    participant.consent()

    events = participant_stream(participant, "Welche Museen haben sonntags geöffnet?")

    missing = progress(events)["missing"]
    assert missing.startswith("Noch nötig:") and "1 Nachricht" in missing, missing


def participant_stream(participant, text):
    """The page's script's request, with the remote participant's cookie."""
    client = AsyncClient(headers={"accept-language": "en"})
    client.cookies = participant.client.cookies

    async def post():
        response = await client.post(
            reverse("surveys:session_chat", args=[participant.token]),
            {"step": STEP, "text": text},
            headers={"accept": STREAM},
        )
        return [json.loads(line) async for line in response.streaming_content]

    return async_to_sync(post)()


def test_the_two_category_chat_sends_no_counters(study_a, client_for, llm_server):
    two = ChatRun(client_for("experimenter_a"), study_a, llm_server)

    events = stream(two, "What is the area of Austria?")

    assert events[-1]["done"] is True
    # Its counts are tags, which post a form and bring the page back.
    assert progress(events) is None


def test_without_javascript_the_remote_page_shows_the_new_counts(db, llm_server):
    study = make_remote_study(llm_server, slug="remote-counted", **NATURALISTIC)
    participant = RemoteRun(study)
    participant.consent()
    assert "2 more messages" in participant.get().content.decode()

    assert participant.send("Which museums open on Sundays?", STEP).status_code == 302
    page = participant.get().content.decode()
    assert counted(page) == ("1", "0")
    assert "Still needed: 1 more message, 5 more minutes." in page

    assert participant.send(FAILING, STEP).status_code == 302
    assert counted(participant.get().content.decode()) == ("1", "0")

    block_started_ago(participant.session, 5)
    assert participant.send("And on Mondays?", STEP).status_code == 302
    page = participant.get().content.decode()
    assert counted(page) == ("2", "5")
    assert "Still needed" not in page
    assert participant.post(STEP).status_code == 302
