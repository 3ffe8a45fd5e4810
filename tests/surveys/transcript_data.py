"""Blocks and transcripts for the transcript tests, stored as the chat and the
import leave them (the services under test write them the same way)."""

from datetime import timedelta

from django.utils import timezone

from surveys.models import InteractionBlock, PromptEntry, Transcript, Turn, TurnRedaction


def ended_block(session, block: int) -> InteractionBlock:
    now = timezone.now()
    return InteractionBlock.objects.create(
        session=session,
        block=block,
        system=session.system_for_block(block),
        started_at=now - timedelta(minutes=15),
        ended_at=now,
    )


def stored_transcript(interaction, *, turns: int, redacted_by=None) -> Transcript:
    """`turns` turns: user and assistant in turn, every user turn a prompt-log
    entry, the last turn an error, the first one redacted when `redacted_by`."""
    transcript = Transcript.objects.create(interaction=interaction, source=Transcript.Source.CHAT)
    start = timezone.now() - timedelta(minutes=10)
    for position in range(1, turns + 1):
        at = start + timedelta(seconds=20 * position)
        fields = {"transcript": transcript, "position": position, "started_at": at}
        if position == turns:
            Turn.objects.create(**fields, role="error", text="", error_cause="timeout")
        elif position % 2:
            prompt = PromptEntry.objects.create(
                interaction=interaction, category="glatteis", text=f"question {position}"
            )
            Turn.objects.create(**fields, role="user", text=f"question {position}", prompt=prompt)
        else:
            Turn.objects.create(
                **fields,
                role="assistant",
                text=f"answer {position}",
                completed_at=at + timedelta(seconds=3),
                first_token_ms=412,
                latency_ms=2950,
                model="demo-model-1",
                prompt_tokens=31,
                completion_tokens=87,
                finish_reason="stop",
            )
    if redacted_by is not None:
        first = transcript.turns.get(position=1)
        first.text = "[redacted]"
        first.save()
        TurnRedaction.objects.create(turn=first, redacted_by=redacted_by, reason="own name")
    return transcript
