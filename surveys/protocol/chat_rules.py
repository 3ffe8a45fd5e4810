"""What the built-in chat sends to a system, and what it may store
(docs/design/transcripts.md §10.3).

The conversation sent must always be one a strict chat template accepts
(Mistral, Gemma and Llama-2 templates under vLLM and llama.cpp answer 400
to two user messages in a row). The rule: a message that never got an
answer (its call failed, timed out, was filtered or interrupted) is left
out of every later call; the system reads the system prompt, then each
answered message with its answer, then the message asked about. The
unanswered message stays in the transcript, and every answer or error turn
records the positions of the turns that were sent with its call
(`Turn.sent_positions`), so the transcript says exactly what the model read.

Pure functions over `(position, role, text, reply_to_id)` rows: no queries.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

USER, ASSISTANT, SYSTEM = "user", "assistant", "system"

# C0 controls other than tab, line feed and carriage return: PostgreSQL
# cannot store NUL, and none of them is text a participant or a model meant.
# A lone surrogate (JSON allows "\ud800") cannot be encoded for the database.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SURROGATES = re.compile(r"[\ud800-\udfff]")


@dataclass(frozen=True)
class TurnRow:
    position: int
    role: str
    text: str
    reply_to_id: int | None
    pk: int


@dataclass(frozen=True)
class Conversation:
    """The messages of one call and the positions of the turns they came from."""

    messages: list[dict[str, str]]
    sent_positions: list[int]


def cleaned(text: str) -> tuple[str, int]:
    """The text without control characters, and how many were taken out or replaced."""
    text, removed = _CONTROLS.subn("", text)
    text, replaced = _SURROGATES.subn("\ufffd", text)
    return text, removed + replaced


def answers_by_question(rows: Iterable[TurnRow]) -> dict[int, TurnRow]:
    """Each answered user turn's answer, by the user turn's pk.

    An answer names its question (`reply_to`); a turn stored before answers
    did answers the user turn before it.
    """
    answers: dict[int, TurnRow] = {}
    last_user: int | None = None
    for row in rows:
        if row.role == USER:
            last_user = row.pk
        elif row.role == ASSISTANT:
            question = row.reply_to_id or last_user
            if question is not None and question not in answers:
                answers[question] = row
    return answers


def conversation(rows: list[TurnRow], asked: TurnRow) -> Conversation:
    """The call for `asked` (a user turn among or after `rows`): the latest
    system prompt, each answered message before it with its answer, then it."""
    earlier = [row for row in rows if row.position < asked.position]
    answers = answers_by_question(earlier)
    sent: list[TurnRow] = []
    system = next((row for row in reversed(earlier) if row.role == SYSTEM), None)
    if system is not None and system.text.strip():
        sent.append(system)
    for row in earlier:
        answer = answers.get(row.pk) if row.role == USER else None
        if answer is not None:
            sent += [row, answer]
    sent.append(asked)
    return Conversation(
        messages=[{"role": row.role, "content": row.text} for row in sent],
        sent_positions=[row.position for row in sent],
    )


def unanswered(rows: list[TurnRow]) -> TurnRow | None:
    """The last user turn, when it has no answer yet."""
    last_user = next((row for row in reversed(rows) if row.role == USER), None)
    if last_user is None or last_user.pk in answers_by_question(rows):
        return None
    return last_user


def answered_messages(rows: list[TurnRow]) -> set[int]:
    """The pks of the user turns that got an answer: only these were part of
    the conversation the system read, so only these can be tagged as prompts
    and count towards a block's minimum of messages."""
    return set(answers_by_question(rows))


def sent_so_far(rows: Iterable[TurnRow]) -> tuple[int, int]:
    """The participant's messages in this block and their characters."""
    texts = [row.text for row in rows if row.role == USER]
    return len(texts), sum(len(text) for text in texts)
