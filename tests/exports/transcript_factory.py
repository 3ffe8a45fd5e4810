"""Transcripts for the blocks of a populated study, written straight through
the models (not through the chat or the import, which have their own tests).

Block 1 of every session was chatted with a connected system: a system
prompt, then per prompt-log entry a tagged user turn and the answer with the
figures the API reports, and a failed call at the end. Block 2 was imported
after the block, in the three formats in turn, without times. The second
block of every fourth session has no transcript at all.
"""

from datetime import timedelta

from surveys.models import InteractionBlock, Transcript, Turn, TurnRedaction

IMPORT_FORMATS = [choice.value for choice in Transcript.Format]
SYSTEM_PROMPT = "You are a careful assistant."
MODEL = "demo-model-1"


def has_transcript(interaction: InteractionBlock) -> bool:
    return not (interaction.block == 2 and interaction.session.allocation_number % 4 == 0)


def add_transcripts(study) -> list[Transcript]:
    """A transcript for every block of the study that has_transcript, in every session."""
    blocks = [
        interaction
        for interaction in InteractionBlock.objects.filter(session__study=study)
        .select_related("session")
        .prefetch_related("prompts")
        .order_by("session__allocation_number", "block")
        if has_transcript(interaction)
    ]
    transcripts = Transcript.objects.bulk_create(
        [_transcript(interaction, number) for number, interaction in enumerate(blocks)]
    )
    turns = []
    for interaction, transcript in zip(blocks, transcripts, strict=True):
        turns += _turns(interaction, transcript)
    Turn.objects.bulk_create(turns)
    return transcripts


def _transcript(interaction: InteractionBlock, number: int) -> Transcript:
    if interaction.block == 1:
        return Transcript(interaction=interaction, source=Transcript.Source.CHAT)
    return Transcript(
        interaction=interaction,
        source=Transcript.Source.IMPORT,
        import_format=IMPORT_FORMATS[number % len(IMPORT_FORMATS)],
        imported_by=interaction.session.experimenter,
        imported_at=interaction.ended_at,
    )


def _turns(interaction: InteractionBlock, transcript: Transcript) -> list[Turn]:
    chat = transcript.source == Transcript.Source.CHAT
    turns = [Turn(role=Turn.Role.SYSTEM, text=SYSTEM_PROMPT)] if chat else []
    for number, prompt in enumerate(interaction.prompts.all(), start=1):
        question = prompt.text or f"Question {number} of block {interaction.block}"
        turns.append(Turn(role=Turn.Role.USER, text=question, prompt=prompt))
        answer = f"Answer {number}: it depends, see the sources."
        turns.append(Turn(role=Turn.Role.ASSISTANT, text=answer))
    if chat:
        turns.append(Turn(role=Turn.Role.USER, text="One more, untagged?"))
        turns.append(Turn(role=Turn.Role.ERROR, error_cause="timeout"))
    for position, turn in enumerate(turns, start=1):
        turn.transcript = transcript
        turn.position = position
        if chat:
            _time(turn, interaction.started_at + timedelta(seconds=30 * position))
    return turns


def _time(turn: Turn, start) -> None:
    """What the chat records: times for every turn, the API's figures for answers."""
    turn.started_at = start
    turn.completed_at = start + timedelta(seconds=4, milliseconds=250)
    if turn.role == Turn.Role.ASSISTANT:
        turn.first_token_ms, turn.latency_ms = 380, 4250
        turn.model, turn.finish_reason = MODEL, "stop"
        turn.prompt_tokens, turn.completion_tokens = 12 * turn.position, 40


def redact(turn: Turn, text: str, *, by, reason: str = "the participant typed their name") -> None:
    """What a coordinator's redaction leaves: the replaced text and its audit row."""
    turn.text = text
    turn.save(update_fields=["text"])
    TurnRedaction.objects.create(turn=turn, redacted_by=by, reason=reason)
