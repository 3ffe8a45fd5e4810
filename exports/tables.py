"""The records of each data sheet: one mapping per row, keyed by the sheet's
column keys (exports.columns), read with one query per sheet when a writer
iterates it, streamed in chunks so that memory stays flat. A record holds
every column the dataset reads (the free-text ones only when they are asked
for); exports.dataset adds the columns worked out from the others.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

from django.db.models import (
    BooleanField,
    DurationField,
    ExpressionWrapper,
    F,
    Max,
    OuterRef,
    Q,
    Subquery,
    Window,
)
from django.db.models.functions import Coalesce, RowNumber, TruncDate

from exports import columns as cols
from exports.anonymize import local_date, seconds_between
from exports.companion_columns import companion_values
from exports.dataset_types import ExportDataset, Record
from exports.retest_records import RETESTS, RetestRecords
from exports.rows import CHUNK_SIZE, answers_and_scores, evaluation_number, in_session_order
from exports.transcript_columns import TRANSCRIPTS
from exports.transcript_records import TranscriptRecords
from scoring.instruments.companions import CompanionScale, chosen_scales
from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import ITEM_KEYS, ITEMS
from scoring.scores.engine import SCORE_COLUMNS
from scoring.scores.quality import is_inconsistent, is_speeding, is_straight_lined
from surveys.models import (
    CompanionResponse,
    DemographicsResponse,
    FeedbackResponse,
    InteractionBlock,
    PromptEntry,
)
from surveys.selection import (
    BLOCK_ACTIVITY,
    block_activity,
    exported_transcripts,
    few_turns_flag,
    included_sessions,
    prompt_tallies,
    session_filter,
    submitted_evaluations,
)
from surveys.steps import Step


def _status(step: str) -> str:
    if step == Step.COMPLETE:
        return "complete"
    if step == Step.ABANDONED:
        return "abandoned"
    return "in_progress"


# The SHS's figures of an evaluation row (answers, then scores); the companion
# scales' values follow them.
SHS_FIGURES = len(ITEM_KEYS) + len(SCORE_COLUMNS)


def _companion_annotations(
    as_of: datetime, scales: Sequence[CompanionScale]
) -> dict[str, Subquery]:
    """Each chosen companion scale's answers and score of the row, submitted
    by the export's moment, as subqueries of the evaluations' one query: no query
    more per scale or row."""
    annotations = {}
    for key in (scale.key for scale in scales):
        submitted = CompanionResponse.objects.filter(
            evaluation=OuterRef("pk"), scale=key, submitted_at__lte=as_of
        )
        annotations[f"companion_{key}_answers"] = Subquery(submitted.values("answers")[:1])
        annotations[f"companion_{key}_score"] = Subquery(submitted.values("score")[:1])
    return annotations


def _administrator_form() -> Window:
    """Each questionnaire's number among its administrator's in the export, by
    submission (ties in the order stored), counted in the table's one query.
    The report takes each administrator's last one by the same order
    (exports.report.data), so the highest number is the one it counts."""
    return Window(
        RowNumber(),
        partition_by=F("experimenter_id"),
        order_by=(F("submitted_at").asc(), F("pk").asc()),
    )


class SheetRecords:
    """The record generators of one dataset; each runs one query when iterated."""

    def __init__(self, dataset: ExportDataset, pseudonyms: dict[int, str]):
        self.dataset = dataset
        self.pseudonyms = pseudonyms
        study, as_of, pilot = dataset.study, dataset.as_of, dataset.include_pilot
        self.sessions_qs = included_sessions(study, as_of, pilot)
        self.order = lambda session_pk: in_session_order(dataset.order_salt, session_pk)
        self.evaluations_qs = submitted_evaluations(study, as_of, pilot).order_by(
            self.order("session_id"), "block"
        )
        self.in_sessions = session_filter(study, as_of, pilot, "session__")
        self.prompts_in_sessions = session_filter(study, as_of, pilot, "interaction__session__")
        # Only the scales the study chose have columns (exports.companion_columns).
        self.companion_scales = chosen_scales(study.companion_scales)

    def all(self):
        """(sheet, number of rows, records) of every data sheet."""
        evaluations = self.evaluations_qs.count()
        blocks = InteractionBlock.objects.filter(self.in_sessions)
        # As of the export's moment, like every other row: the report and the
        # replication package count the same questionnaires.
        as_of = self.dataset.as_of
        feedback = FeedbackResponse.objects.filter(self.in_sessions, submitted_at__lte=as_of)
        demographics = DemographicsResponse.objects.filter(
            self.in_sessions, submitted_at__lte=as_of
        )
        sheets = [
            (cols.EVALUATIONS, evaluations, self.evaluation_records),
            (cols.ITEM_ANSWERS, evaluations * len(ITEMS), self.item_records),
            (cols.SESSIONS, len(self.dataset.sessions), self.session_records),
            (cols.PROMPT_LOG, blocks.count(), lambda: self.prompt_log_records(blocks)),
            (cols.FEEDBACK_SHEET, feedback.count(), lambda: self.feedback_records(feedback)),
            (
                cols.DEMOGRAPHICS_SHEET,
                demographics.count(),
                lambda: self.demographics_records(demographics),
            ),
        ]
        retests = RetestRecords(self.dataset)
        if retests.is_exported(count := retests.count()):
            sheets.append((RETESTS, count, retests.records))
        if self.dataset.include_free_text:  # the transcripts are free text as a whole
            turns = TranscriptRecords(self.dataset)
            sheets.append((TRANSCRIPTS, turns.count(), turns.records))
        return sheets

    # Evaluations -------------------------------------------------------------

    def _evaluation_values(self):
        # The database reduces the timestamps to what is exported (a duration,
        # a date) and reports a flag for "scored": turning timestamps into
        # Python datetimes row by row would cost more than the rest of the row.
        companions = _companion_annotations(self.dataset.as_of, self.companion_scales)
        return (
            self.evaluations_qs.annotate(
                shs_time=ExpressionWrapper(
                    F("submitted_at") - F("first_displayed_at"), output_field=DurationField()
                ),
                submitted_on=TruncDate("submitted_at", tzinfo=self.dataset.timezone),
                is_scored=ExpressionWrapper(
                    Q(scored_at__isnull=False), output_field=BooleanField()
                ),
                **block_activity(self.dataset.as_of),
                **companions,
            )
            .values_list(
                "session_id",
                "block",
                "system__name",
                "language",
                "instrument_version",
                "protocol",
                "session__is_pilot",
                "shs_time",
                "submitted_on",
                "is_scored",
                *BLOCK_ACTIVITY,
                *ITEM_KEYS,
                *SCORE_COLUMNS,
                *companions,
            )
            .iterator(chunk_size=CHUNK_SIZE)
        )

    def evaluation_records(self) -> Iterator[Record]:
        index = self.dataset.sessions
        free_text = self.dataset.include_free_text
        prompts, overrides, transcripts = self._free_text() if free_text else ({}, {}, {})
        for (
            session_pk,
            block,
            system,
            language,
            version,
            protocol,
            pilot,
            shs_time,
            submitted_on,
            is_scored,
            *figures,
        ) in self._evaluation_values():
            activity, figures = figures[: len(BLOCK_ACTIVITY)], figures[len(BLOCK_ACTIVITY) :]
            key = index.get(session_pk)
            if key is None:  # its session was committed after the index was read
                continue
            shs, companions = figures[:SHS_FIGURES], figures[SHS_FIGURES:]
            answers, scores = answers_and_scores(shs, is_scored)
            record = {
                "evaluation_id": evaluation_number(key.session_id, block),
                "participant_id": key.participant_id,
                "session_id": key.session_id,
                "block": block,
                "system": system,
                "language": language,
                "instrument_version": version,
                "administrator": key.administrator,
                **dict(zip(ITEM_KEYS, answers, strict=True)),
                **scores,
                "shs_seconds": round(shs_time.total_seconds(), 1),
                "pilot": int(pilot),
                "date": submitted_on,
                "session_complete": key.complete,
                "consent_version": key.consent_version,
                "protocol": protocol,
                **self._flags(answers, scores["flagged_pairs"], shs_time, (protocol, *activity)),
                **companion_values(self.companion_scales, companions),
            }
            if free_text:
                record["transcript_id"] = transcripts.get((session_pk, block), "")
                record["override_reason"] = overrides.get((session_pk, block), "")
                record["prompt_texts"] = prompts.get((session_pk, block), "")
            yield record

    def _flags(self, answers, flagged_pairs: str, shs_time, activity) -> Record:
        # The exact duration, not the exported one rounded to 0.1 s.
        study = self.dataset.study
        return {
            "flag_speeding": is_speeding(shs_time.total_seconds(), study.speeding_seconds),
            "flag_straight_lining": is_straight_lined(answers),
            "flag_inconsistent_pairs": is_inconsistent(flagged_pairs),
            "flag_too_few_turns": few_turns_flag(study, *activity),
        }

    def _free_text(self) -> tuple[dict, dict, dict]:
        prompts: dict[tuple[int, int], list[str]] = {}
        # A prompt that is a transcript's turn reads as the turn does: after a
        # redaction of the turn, the export carries only the redacted text.
        texts = (
            PromptEntry.objects.filter(self.prompts_in_sessions)
            .annotate(typed=Coalesce("turn__text", "text"))
            .exclude(typed="")
            .order_by("interaction__session_id", "interaction__block", "created_at", "pk")
            .values_list("interaction__session_id", "interaction__block", "typed")
        )
        for session_pk, block, text in texts.iterator(chunk_size=CHUNK_SIZE):
            prompts.setdefault((session_pk, block), []).append(text)
        overrides = {
            (session_pk, block): reason
            for session_pk, block, reason in InteractionBlock.objects.filter(self.in_sessions)
            .exclude(override_reason="")
            .values_list("session_id", "block", "override_reason")
        }
        transcripts = {
            (session_pk, block): code
            for session_pk, block, code in exported_transcripts(
                self.dataset.study, self.dataset.as_of, self.dataset.include_pilot
            ).values_list("interaction__session_id", "interaction__block", "code")
        }
        return {key: "\n".join(lines) for key, lines in prompts.items()}, overrides, transcripts

    def item_records(self) -> Iterator[Record]:
        index = self.dataset.sessions
        numbers = [item.number for item in ITEMS]
        rows = self.evaluations_qs.values_list("session_id", "block", *ITEM_KEYS)
        for session_pk, block, *answers in rows.iterator(chunk_size=CHUNK_SIZE):
            key = index.get(session_pk)
            if key is None:
                continue
            evaluation_id = evaluation_number(key.session_id, block)
            for number, answer in zip(numbers, answers, strict=True):
                yield {"evaluation_id": evaluation_id, "item": number, "answer": answer}

    # Sessions and what belongs to them ----------------------------------------

    def _session_values(self):
        spent = ExpressionWrapper(
            F("step_records__completed_at") - F("step_records__entered_at"),
            output_field=DurationField(),
        )
        durations = {
            f"{step}_seconds": Max(spent, filter=Q(step_records__step=step))
            for step, _label in cols.STEP_DURATIONS
        }
        fields = ("language", "is_pilot", "remote", "step", "created_at", "ended_at")
        systems = ("first_system__name", "second_system__name")
        rows = (
            self.sessions_qs.annotate(**durations)
            .order_by(self.order("pk"))
            .values_list("pk", *fields, *systems, *durations)
        )
        return durations, rows.iterator(chunk_size=CHUNK_SIZE)

    def session_records(self) -> Iterator[Record]:
        index, tz = self.dataset.sessions, self.dataset.timezone
        durations, rows = self._session_values()
        for pk, language, pilot, remote, step, created, ended, first, second, *spans in rows:
            key = index[pk]
            yield {
                "session_id": key.session_id,
                "participant_id": key.participant_id,
                "administrator": key.administrator,
                "language": language,
                "consent_version": key.consent_version,
                "pilot": int(pilot),
                "mode": "remote" if remote else "supervised",
                "status": _status(step),
                "date": local_date(created, tz),
                "system_block1": first,
                "system_block2": second,
                **{
                    column: None if span is None else round(span.total_seconds(), 1)
                    for column, span in zip(durations, spans, strict=True)
                },
                "total_seconds": seconds_between(created, ended),
            }

    def prompt_log_records(self, blocks) -> Iterator[Record]:
        index = self.dataset.sessions
        tallies = prompt_tallies("prompts__")
        rows = (
            blocks.annotate(
                **tallies,
                overridden=ExpressionWrapper(~Q(override_reason=""), output_field=BooleanField()),
            )
            .order_by(self.order("session_id"), "block")
            .values_list("session_id", "block", "system__name", *tallies, "overridden")
        )
        for session_pk, block, system, *counts, overridden in rows.iterator(chunk_size=CHUNK_SIZE):
            key = index.get(session_pk)
            if key is None:
                continue
            verified, glatteis, follow_ups, source_requests, challenges = counts
            yield {
                "session_id": key.session_id,
                "block": block,
                "system": system,
                "verified_prompts": verified,
                "glatteis_prompts": glatteis,
                "follow_ups": follow_ups,
                "source_requests": source_requests,
                "challenges": challenges,
                "minimum_override": int(overridden),
            }

    def feedback_records(self, feedback) -> Iterator[Record]:
        index, tz = self.dataset.sessions, self.dataset.timezone
        rows = (
            feedback.annotate(administrator_form=_administrator_form())
            .order_by(self.order("session_id"))
            .values_list(
                "session_id",
                "experimenter_id",
                "submitted_at",
                "administrator_form",
                *FEEDBACK.keys,
            )
        )
        for session_pk, experimenter_id, submitted, form, *answers in rows.iterator(
            chunk_size=CHUNK_SIZE
        ):
            key = index.get(session_pk)
            if key is not None:
                yield {
                    "session_id": key.session_id,
                    "administrator": self.pseudonyms.get(experimenter_id, key.administrator),
                    "date": local_date(submitted, tz),
                    "administrator_form": form,
                    **dict(zip(FEEDBACK.keys, answers, strict=True)),
                }

    def demographics_records(self, demographics) -> Iterator[Record]:
        index = self.dataset.sessions
        rows = demographics.order_by(self.order("session_id")).values_list(
            "session_id", *DEMOGRAPHICS.keys
        )
        for session_pk, *answers in rows.iterator(chunk_size=CHUNK_SIZE):
            key = index.get(session_pk)
            if key is not None:
                yield {
                    "session_id": key.session_id,
                    "participant_id": key.participant_id,
                    **dict(zip(DEMOGRAPHICS.keys, answers, strict=True)),
                }
