"""The Retests table (docs/design/exports.md §7.4, docs/design/validation.md §14.2): one row per
submitted SHS of the retest wave, with the export's own participant_id, session_id and the
block's evaluation_id, so that it joins the Evaluations table of the same
export; read with one query streamed in chunks.

What identifies a retest stays out: no token or its hash, no due or
submission date, only the days from the block's first SHS to its retest
(a duration, rounded as the other durations of the export).
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import (
    BooleanField,
    DurationField,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    Subquery,
)
from django.db.models.expressions import Combinable

from exports.columns import (
    BLOCK_VALUES,
    EVALUATIONS,
    INTEGER,
    NUMBER,
    PARTICIPANT_ID,
    SESSION_ID,
    SYSTEM,
    TEXT,
    Column,
    Sheet,
)
from exports.dataset_types import ExportDataset, Record
from exports.rows import CHUNK_SIZE, answers_and_scores, evaluation_number, in_session_order
from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import SCORE_COLUMNS
from surveys.models import RetestEvaluation
from surveys.selection import session_filter, submitted_evaluations

SECONDS_PER_DAY = 86400
# The answers and scores are labelled as in Evaluations: the same instrument.
_SHS_COLUMNS = tuple(c for c in EVALUATIONS.columns if c.key in {*ITEM_KEYS, *SCORE_COLUMNS})

RETESTS = Sheet(
    "retests",
    "Retests",
    "One row per submitted SHS of the retest wave: the participant rated the block's system "
    "again after the study's number of days. Joined to Evaluations on evaluation_id (or "
    "participant_id and block).",
    (
        Column(
            "evaluation_id",
            "The block's first evaluation, as in Evaluations (export-local, like it)",
        ),
        PARTICIPANT_ID,
        SESSION_ID,
        Column("block", "Block of the session whose system was rated again", INTEGER, BLOCK_VALUES),
        SYSTEM,
        Column("instrument_version", "SHS instrument version of the retest", TEXT),
        Column(
            "retest_days",
            "Days from the submission of the block's first SHS to the submission of its retest, "
            "to 0.1 day",
            NUMBER,
        ),
        *_SHS_COLUMNS,
        Column(
            "shs_seconds", "Seconds from first display of the retest's SHS to submission", NUMBER
        ),
    ),
)


class RetestRecords:
    """The submitted retest evaluations of an export's sessions, in session_id
    and block order."""

    def __init__(self, dataset: ExportDataset):
        self.dataset = dataset
        study, as_of, pilot = dataset.study, dataset.as_of, dataset.include_pilot
        self.evaluations = RetestEvaluation.objects.filter(
            session_filter(study, as_of, pilot, "retest__session__"),
            submitted_at__isnull=False,
            submitted_at__lte=as_of,
        )
        self.first = submitted_evaluations(study, as_of, pilot).filter(
            session_id=OuterRef("retest__session_id"), block=OuterRef("block")
        )

    def count(self) -> int:
        return self.evaluations.count()

    def is_exported(self, count: int) -> bool:
        """A study with a retest wave has the table, empty or not; a study
        that stopped its wave keeps the retests it holds."""
        return self.dataset.study.has_retest or count > 0

    def _values(self):
        def since(field: Combinable) -> ExpressionWrapper:
            return ExpressionWrapper(F("submitted_at") - field, output_field=DurationField())

        rows = self.evaluations.annotate(
            since_first=since(Subquery(self.first.values("submitted_at")[:1])),
            shs_time=since(F("first_displayed_at")),
            is_scored=ExpressionWrapper(Q(scored_at__isnull=False), output_field=BooleanField()),
        ).order_by(in_session_order(self.dataset.order_salt, "retest__session_id"), "block")
        return rows.values_list(
            "retest__session_id",
            "block",
            "system__name",
            "instrument_version",
            "since_first",
            "shs_time",
            "is_scored",
            *ITEM_KEYS,
            *SCORE_COLUMNS,
        ).iterator(chunk_size=CHUNK_SIZE)

    def records(self) -> Iterator[Record]:
        index = self.dataset.sessions
        for (
            session_pk,
            block,
            system,
            version,
            since_first,
            shs_time,
            scored,
            *figures,
        ) in self._values():
            key = index.get(session_pk)
            if key is None:  # its session was committed after the index was read
                continue
            answers, scores = answers_and_scores(figures, scored)
            yield {
                "evaluation_id": evaluation_number(key.session_id, block),
                "participant_id": key.participant_id,
                "session_id": key.session_id,
                "block": block,
                "system": system,
                "instrument_version": version,
                "retest_days": _days(since_first),
                **dict(zip(ITEM_KEYS, answers, strict=True)),
                **scores,
                "shs_seconds": round(shs_time.total_seconds(), 1),
            }


def _days(span) -> float | None:
    return None if span is None else round(span.total_seconds() / SECONDS_PER_DAY, 1)
