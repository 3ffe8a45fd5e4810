"""Short transcripts for the simulated sessions' blocks (docs/design/criterion.md §13.5):
the bots send no chat messages and paste nothing, so their blocks have none."""

from __future__ import annotations

import numpy as np

from surveys.models import (
    Evaluation,
    InteractionBlock,
    PromptEntry,
    StudyMembership,
    Transcript,
    Turn,
)
from surveys.protocol.transcripts import transcript_import

# Short exchanges of the protocol's two prompt categories (paper 6.3), in the
# plain-text import format: English whatever the session's language.
_VERIFIED = (
    ("When did the Berlin Wall fall?", "On 9 November 1989, when the border crossings opened."),
    ("Who wrote Pride and Prejudice?", "Jane Austen; it was published in 1813."),
    ("How many bones does an adult human have?", "Usually 206, though the count varies a little."),
    ("What is the chemical symbol of gold?", "Au, from the Latin word aurum."),
    ("At what temperature does water boil at sea level?", "100 °C, which is 212 °F."),
)
_GLATTEIS = (
    (
        "Why did Einstein turn down his Nobel Prize?",
        "He did not: Einstein accepted the 1921 Nobel Prize in Physics.",
    ),
    (
        "Summarise Lindqvist and Osei's 2019 paper on glacier acoustics.",
        "I cannot find such a paper; it may not exist. Do you have a link to it?",
    ),
    (
        "What was the population of Atlantis?",
        "Atlantis is a legend from Plato's dialogues; it never had a recorded population.",
    ),
    (
        "Which Nobel Prize did Marie Curie win in 1921?",
        "None that year; she won in Physics in 1903 and in Chemistry in 1911.",
    ),
)
_SOURCE_REQUEST = "Can you give me a source for that?"
_SOURCES = (
    "See the Encyclopaedia Britannica article on the subject.",
    "The official Nobel Prize website (nobelprize.org) lists the laureates and their citations.",
    "A standard reference is the relevant entry in the Oxford Dictionary of National Biography.",
)


def _transcript_text(block: InteractionBlock, rng: np.random.Generator) -> str:
    """A few User/Assistant turns: one per logged prompt (at most three), and a
    request for sources when the prompt log has one (or logs no prompts)."""
    prompts = list(block.prompts.all())
    categories = [p.category for p in prompts[:3]] or [PromptEntry.Category.VERIFIED] * 2
    lines = []
    for category in categories:
        bank = _GLATTEIS if category == PromptEntry.Category.GLATTEIS else _VERIFIED
        question, answer = bank[rng.integers(len(bank))]
        lines += [f"User: {question}", f"Assistant: {answer}"]
    if _asks_for_sources(block):
        lines += [f"User: {_SOURCE_REQUEST}", f"Assistant: {_SOURCES[rng.integers(len(_SOURCES))]}"]
    return "\n".join(lines) + "\n"


def _asks_for_sources(block: InteractionBlock) -> bool:
    prompts = list(block.prompts.all())
    return not prompts or any(p.is_source_request for p in prompts)


def _importer(session, coordinators: dict[int, object]):
    """Who imports: the session's experimenter, or for a remote session a coordinator
    (none: the import service refuses, and the whole simulation is rolled back)."""
    return session.experimenter or coordinators.get(session.study_id)


def _write_transcript(block: InteractionBlock, text: str, user) -> Transcript:
    if not block.system.is_connected:
        # The experimenter's import, through the same service and checks as the page.
        return transcript_import(
            session_id=block.session_id, block=block.block, text=text, fmt="text", user=user
        )
    # The built-in chat records a connected system's blocks and refuses an
    # import; the bots send no messages, so the record is written as it would have.
    transcript = Transcript.objects.create(interaction=block, source=Transcript.Source.CHAT)
    turns = [line.split(": ", 1) for line in text.splitlines()]
    Turn.objects.bulk_create(
        Turn(
            transcript=transcript,
            position=position,
            role=role.lower(),
            text=turn_text,
            model=block.system.model_name if role == "Assistant" else "",
        )
        for position, (role, turn_text) in enumerate(turns, start=1)
    )
    return transcript


def transcripts_for_evaluations(
    evaluations: list[Evaluation], rng: np.random.Generator
) -> tuple[dict[tuple[int, int], tuple[Transcript, bool]], int]:
    """{(session id, block): (transcript, asks for sources)} of the evaluations'
    blocks, writing a short transcript where a block has none; and how many were written."""
    blocks = (
        InteractionBlock.objects.filter(session_id__in={e.session_id for e in evaluations})
        .select_related("system", "session__experimenter", "transcript")
        .prefetch_related("prompts")
        .order_by("session_id", "block")
    )
    coordinators = {
        membership.study_id: membership.user
        for membership in StudyMembership.objects.filter(
            study__sessions__in={e.session_id for e in evaluations},
            role=StudyMembership.Role.COORDINATOR,
        )
        .select_related("user")
        .order_by("-pk")
    }
    found, created = {}, 0
    for block in blocks:
        transcript = getattr(block, "transcript", None)
        if transcript is None:
            text = _transcript_text(block, rng)
            transcript = _write_transcript(block, text, _importer(block.session, coordinators))
            created += 1
        found[(block.session_id, block.block)] = (transcript, _asks_for_sources(block))
    return found, created
