"""The records of the Transcripts table (exports.transcript_columns): every turn
of the exported blocks' transcripts, read with one query streamed in chunks,
however many transcripts and turns there are.

Times leave as §6.3 has them: the date the turn started, and durations (from
the start of the block, and of the turn itself), never a time of day. Who
imported a transcript or redacted a turn is not read at all: the table says
only that the transcript was imported (source) and the turn redacted.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import DurationField, Exists, ExpressionWrapper, F, OuterRef, Q
from django.db.models.functions import TruncDate

from exports.dataset_types import ExportDataset, Record
from exports.rows import CHUNK_SIZE, evaluation_number, in_session_order
from surveys.models import Turn, TurnRedaction
from surveys.selection import exported_transcripts, submitted_evaluations

BLOCK = "transcript__interaction__"
# Read as they are exported, after the transcript's and block's own columns.
_TURN_FIELDS = (
    "position",
    "role",
    "text",
    "is_redacted",
    "started_on",
    "from_block_start",
    "spent",
    "first_token_ms",
    "latency_ms",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "finish_reason",
    "error_cause",
    "reply_to__position",
    "sent_positions",
    "cleaned_chars",
    "prompt__category",
    "prompt__is_follow_up",
    "prompt__is_source_request",
    "prompt__is_challenge",
)


def _seconds(span) -> float | None:
    return None if span is None else round(span.total_seconds(), 1)


class TranscriptRecords:
    """The turns of the transcripts an export includes, in session_id, block
    and turn order."""

    def __init__(self, dataset: ExportDataset):
        self.dataset = dataset
        study, as_of, pilot = dataset.study, dataset.as_of, dataset.include_pilot
        # A chat still running adds turns while the export reads: those started
        # after the export's moment are left out, like the SHS forms submitted then.
        self.turns = Turn.objects.filter(
            Q(started_at__isnull=True) | Q(started_at__lte=as_of),
            transcript__in=exported_transcripts(study, as_of, pilot),
        )
        self.evaluations = submitted_evaluations(study, as_of, pilot)

    def count(self) -> int:
        return self.turns.count()

    def _values(self):
        evaluated = self.evaluations.filter(
            session_id=OuterRef(f"{BLOCK}session_id"), block=OuterRef(f"{BLOCK}block")
        )
        rows = self.turns.annotate(
            is_redacted=Exists(TurnRedaction.objects.filter(turn=OuterRef("pk"))),
            is_evaluated=Exists(evaluated),
            started_on=TruncDate("started_at", tzinfo=self.dataset.timezone),
            from_block_start=ExpressionWrapper(
                F("started_at") - F(f"{BLOCK}started_at"), output_field=DurationField()
            ),
            spent=ExpressionWrapper(
                F("completed_at") - F("started_at"), output_field=DurationField()
            ),
        ).order_by(
            in_session_order(self.dataset.order_salt, f"{BLOCK}session_id"),
            f"{BLOCK}block",
            "position",
        )
        return rows.values_list(
            "transcript__code",
            f"{BLOCK}session_id",
            f"{BLOCK}block",
            f"{BLOCK}system__name",
            f"{BLOCK}session__language",
            "transcript__source",
            "transcript__import_format",
            "is_evaluated",
            *_TURN_FIELDS,
        ).iterator(chunk_size=CHUNK_SIZE)

    def records(self) -> Iterator[Record]:
        index = self.dataset.sessions
        for (
            code,
            session_pk,
            block,
            system,
            language,
            source,
            fmt,
            evaluated,
            *turn,
        ) in self._values():
            key = index.get(session_pk)
            if key is None:  # its session was committed after the index was read
                continue
            yield {
                "transcript_id": code,
                "session_id": key.session_id,
                "evaluation_id": evaluation_number(key.session_id, block) if evaluated else None,
                "block": block,
                "system": system,
                "language": language,
                "source": source,
                "import_format": fmt,
                **_turn_record(*turn),
            }


def _turn_record(
    position, role, text, redacted, started_on, from_block_start, spent, *figures
) -> Record:
    *reported, answers, sent, cleaned, category, follow_up, source_request, challenge = figures
    first_token_ms, latency_ms, model, prompt_tokens, completion_tokens, finish, cause = reported
    tagged = category is not None
    return {
        "position": position,
        "role": role,
        "text": text,
        "redacted": int(redacted),
        "date": started_on,
        "start_seconds": _seconds(from_block_start),
        "duration_seconds": _seconds(spent),
        "first_token_ms": first_token_ms,
        "latency_ms": latency_ms,
        "model": model,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "finish_reason": finish,
        "error_cause": cause,
        "answers_position": answers,
        "sent_positions": ";".join(map(str, sent)) if sent else "",
        "cleaned_characters": cleaned,
        "category": category,
        "follow_up": int(follow_up) if tagged else None,
        "source_request": int(source_request) if tagged else None,
        "challenge": int(challenge) if tagged else None,
    }
