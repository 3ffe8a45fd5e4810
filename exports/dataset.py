"""What an export contains: the study's data as anonymized rows, one lazy
table per sheet, read with a fixed number of queries however large the study.

Every table reads the database only when a writer iterates it, each with one
query streamed in chunks, so a CSV export never pays for the workbook's other
sheets and memory stays flat. All tables see the same moment: sessions and
evaluations are taken as of the time the export started, and a participant's
data is not deleted while an export reads the study (surveys/erasure_lock.py,
taken by the job runner).
"""

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, tzinfo

from django.db.models import (
    BooleanField,
    CharField,
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    Max,
    Q,
    Value,
)
from django.db.models.functions import MD5, Cast, Concat, TruncDate
from django.utils import timezone

from exports import columns as cols
from exports.anonymize import (
    administrator_pseudonyms,
    local_date,
    participant_id_factory,
    seconds_between,
    session_order_key,
    session_order_salt,
)
from scoring.engine import score_answers
from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import ITEM_KEYS, ITEMS
from surveys.models import (
    DemographicsResponse,
    Evaluation,
    FeedbackResponse,
    InteractionBlock,
    PromptEntry,
    Study,
    StudySession,
)
from surveys.scores import set_scores
from surveys.steps import IN_PROGRESS, Step

CHUNK_SIZE = 2000
# Sessions that leave no data: a withdrawal deletes it, a screen-out never had any.
WITHOUT_DATA = (Step.WITHDRAWN, Step.INELIGIBLE)
SCORE_FIELDS = Evaluation.SCORE_FIELDS


def evaluation_number(session_id: int, block: int) -> int:
    """The export-local evaluation_id: derived from the session number and block,
    so every sheet computes the same ID without a lookup table."""
    return 2 * session_id - 2 + block


@dataclass(frozen=True)
class SessionKey:
    """How one session appears in this export."""

    session_id: int
    participant_id: str
    administrator: str
    complete: int
    consent_version: str  # "" when no consent was recorded (a pilot without a text)


@dataclass
class Table:
    sheet: cols.Sheet
    columns: tuple[cols.Column, ...]
    count: int
    rows: Callable[[], Iterator[tuple]]

    @property
    def keys(self) -> list[str]:
        return [column.key for column in self.columns]


@dataclass
class ExportDataset:
    study: Study
    as_of: datetime
    include_pilot: bool
    include_free_text: bool
    sessions: dict[int, SessionKey]
    exclusions: dict[str, int]
    instrument_versions: list[str]
    # The secret of this export's session order (see anonymize.session_order_key).
    order_salt: str = ""
    # (language, consent version, sessions) of the sessions exported.
    consent_versions: list[tuple[str, str, int]] = field(default_factory=list)
    # Dates are calendar dates in the platform's time zone (settings.TIME_ZONE).
    timezone: tzinfo = field(default_factory=timezone.get_current_timezone)
    tables: dict[str, Table] = field(default_factory=dict)

    def table(self, key: str) -> Table:
        return self.tables[key]

    @property
    def administrators(self) -> int:
        return len({key.administrator for key in self.sessions.values()})


def build_dataset(*, study: Study, include_pilot: bool, include_free_text: bool) -> ExportDataset:
    """Index the study's sessions and prepare every table (rows are read later)."""
    as_of = timezone.now()
    pseudonyms = administrator_pseudonyms(study)
    sessions = _included_sessions(study, as_of, include_pilot)
    new_participant_id = participant_id_factory()
    salt = session_order_salt()
    # Sessions are numbered, and every sheet lists them, in an order made up for
    # this export: numbered by start, two exports could be joined row by row.
    in_order = sorted(
        sessions.values_list("pk", "experimenter_id", "step", "consent__version"),
        key=lambda session: session_order_key(salt, session[0]),
    )
    index = {
        pk: SessionKey(
            session_id=number,
            participant_id=new_participant_id(),
            administrator=pseudonyms[experimenter_id],
            complete=int(step == Step.COMPLETE),
            consent_version=consent_version or "",
        )
        for number, (pk, experimenter_id, step, consent_version) in enumerate(in_order, start=1)
    }
    dataset = ExportDataset(
        study=study,
        as_of=as_of,
        include_pilot=include_pilot,
        include_free_text=include_free_text,
        sessions=index,
        exclusions=exclusion_counts(study, as_of, include_pilot),
        instrument_versions=list(
            submitted_evaluations(study, as_of, include_pilot)
            .order_by("instrument_version")
            .values_list("instrument_version", flat=True)
            .distinct()
        ),
        order_salt=salt,
        consent_versions=list(
            sessions.filter(consent__isnull=False)
            .values_list("consent__language", "consent__version")
            .annotate(n=Count("pk"))
            .order_by("consent__language", "consent__version")
        ),
    )
    builder = _Tables(dataset, pseudonyms)
    dataset.tables = {
        sheet.key: Table(sheet, sheet.active_columns(include_free_text), count, rows)
        for sheet, count, rows in builder.all()
    }
    return dataset


def session_filter(study: Study, as_of: datetime, include_pilot: bool, prefix: str = "") -> Q:
    condition = Q(**{f"{prefix}study": study, f"{prefix}created_at__lte": as_of}) & ~Q(
        **{f"{prefix}step__in": WITHOUT_DATA}
    )
    if not include_pilot:
        condition &= Q(**{f"{prefix}is_pilot": False})
    return condition


def _included_sessions(study: Study, as_of: datetime, include_pilot: bool):
    return StudySession.objects.filter(session_filter(study, as_of, include_pilot))


def submitted_evaluations(study: Study, as_of: datetime, include_pilot: bool):
    # Only submitted evaluations count: a half-filled form is not a response.
    return Evaluation.objects.submitted().filter(
        session_filter(study, as_of, include_pilot, "session__"), submitted_at__lte=as_of
    )


def exclusion_counts(study: Study, as_of: datetime, include_pilot: bool) -> dict[str, int]:
    """Counts for the About sheet: what the export leaves out, and why."""
    tally: Counter = Counter()
    by_step = (
        StudySession.objects.filter(study=study, created_at__lte=as_of)
        .values("step", "is_pilot")
        .annotate(n=Count("pk"))
        .order_by()
    )
    for row in by_step:
        if row["is_pilot"]:
            tally["pilot"] += row["n"]
            if not include_pilot:
                continue
        tally[row["step"]] += row["n"]
    tally["unsubmitted_evaluations"] = (
        Evaluation.objects.filter(
            session_filter(study, as_of, include_pilot, "session__"),
        )
        .filter(Q(submitted_at__isnull=True) | Q(submitted_at__gt=as_of))
        .count()
    )
    return {
        "pilot": tally["pilot"],
        "withdrawn": tally[Step.WITHDRAWN],
        "ineligible": tally[Step.INELIGIBLE],
        "abandoned": tally[Step.ABANDONED],
        "in_progress": sum(tally[step] for step in IN_PROGRESS),
        "complete": tally[Step.COMPLETE],
        "unsubmitted_evaluations": tally["unsubmitted_evaluations"],
    }


def prompt_tallies(path: str = "") -> dict[str, Count]:
    """The prompt-log counts of the Prompt log sheet and of the study report, as
    aggregates over the PromptEntry rows reached through `path` ("prompts__"
    from an InteractionBlock, "" over PromptEntry itself)."""

    def tally(**condition) -> Count:
        return Count(f"{path}pk", filter=Q(**{path + k: v for k, v in condition.items()}))

    return {
        "verified": tally(category=PromptEntry.Category.VERIFIED),
        "glatteis": tally(category=PromptEntry.Category.GLATTEIS),
        "follow_ups": tally(is_follow_up=True),
        "source_requests": tally(is_source_request=True),
        "challenges": tally(is_challenge=True),
    }


def in_session_order(salt: str, session_pk: str):
    """The database's copy of anonymize.session_order_key, over the session key
    reached through `session_pk`: each sheet is read in session_id order."""
    return MD5(Concat(Value(salt), Cast(F(session_pk), output_field=CharField())))


def _status(step: str) -> str:
    if step == Step.COMPLETE:
        return "complete"
    if step == Step.ABANDONED:
        return "abandoned"
    return "in_progress"


class _Tables:
    """The row generators of one dataset; each runs one query when iterated."""

    def __init__(self, dataset: ExportDataset, pseudonyms: dict[int, str]):
        self.dataset = dataset
        self.pseudonyms = pseudonyms
        study, as_of, pilot = dataset.study, dataset.as_of, dataset.include_pilot
        self.sessions_qs = _included_sessions(study, as_of, pilot)
        self.order = lambda session_pk: in_session_order(dataset.order_salt, session_pk)
        self.evaluations_qs = submitted_evaluations(study, as_of, pilot).order_by(
            self.order("session_id"), "block"
        )
        self.in_sessions = session_filter(study, as_of, pilot, "session__")
        self.prompts_in_sessions = session_filter(study, as_of, pilot, "interaction__session__")

    def all(self):
        evaluations = self.evaluations_qs.count()
        blocks = InteractionBlock.objects.filter(self.in_sessions)
        feedback = FeedbackResponse.objects.filter(self.in_sessions)
        demographics = DemographicsResponse.objects.filter(self.in_sessions)
        return [
            (cols.EVALUATIONS, evaluations, self.evaluation_rows),
            (cols.ITEM_ANSWERS, evaluations * len(ITEMS), self.item_rows),
            (cols.SESSIONS, len(self.dataset.sessions), self.session_rows),
            (cols.PROMPT_LOG, blocks.count(), lambda: self.prompt_log_rows(blocks)),
            (cols.FEEDBACK_SHEET, feedback.count(), lambda: self.feedback_rows(feedback)),
            (
                cols.DEMOGRAPHICS_SHEET,
                demographics.count(),
                lambda: self.demographics_rows(demographics),
            ),
        ]

    # Evaluations -------------------------------------------------------------

    def evaluation_rows(self) -> Iterator[tuple]:
        index = self.dataset.sessions
        free_text = self.dataset.include_free_text
        prompts, overrides = self._free_text() if free_text else ({}, {})
        items = len(ITEM_KEYS)
        # The database reduces the timestamps to what is exported (a duration,
        # a date) and reports a flag for "scored": turning timestamps into
        # Python datetimes row by row would cost more than the rest of the row.
        rows = (
            self.evaluations_qs.annotate(
                shs_time=ExpressionWrapper(
                    F("submitted_at") - F("first_displayed_at"), output_field=DurationField()
                ),
                submitted_on=TruncDate("submitted_at", tzinfo=self.dataset.timezone),
                is_scored=ExpressionWrapper(
                    Q(scored_at__isnull=False), output_field=BooleanField()
                ),
            )
            .values_list(
                "session_id",
                "block",
                "system__name",
                "language",
                "instrument_version",
                "session__is_pilot",
                "shs_time",
                "submitted_on",
                "is_scored",
                *ITEM_KEYS,
                *SCORE_FIELDS,
            )
            .iterator(chunk_size=CHUNK_SIZE)
        )
        for (
            session_pk,
            block,
            system,
            language,
            version,
            pilot,
            shs_time,
            submitted_on,
            is_scored,
            *figures,
        ) in rows:
            key = index.get(session_pk)
            if key is None:  # its session was committed after the index was read
                continue
            answers = figures[:items]
            scores = figures[items:] if is_scored else _score(answers)
            values = (
                evaluation_number(key.session_id, block),
                key.participant_id,
                key.session_id,
                block,
                system,
                language,
                version,
                key.administrator,
                *answers,
                *scores,
                round(shs_time.total_seconds(), 1),
                int(pilot),
                submitted_on,
                key.complete,
                key.consent_version,
            )
            if free_text:
                place = (session_pk, block)
                values += (overrides.get(place, ""), prompts.get(place, ""))
            yield values

    def _free_text(self) -> tuple[dict, dict]:
        prompts: dict[tuple[int, int], list[str]] = {}
        texts = (
            PromptEntry.objects.filter(self.prompts_in_sessions)
            .exclude(text="")
            .order_by("interaction__session_id", "interaction__block", "created_at", "pk")
            .values_list("interaction__session_id", "interaction__block", "text")
        )
        for session_pk, block, text in texts.iterator(chunk_size=CHUNK_SIZE):
            prompts.setdefault((session_pk, block), []).append(text)
        overrides = {
            (session_pk, block): reason
            for session_pk, block, reason in InteractionBlock.objects.filter(self.in_sessions)
            .exclude(override_reason="")
            .values_list("session_id", "block", "override_reason")
        }
        return {key: "\n".join(lines) for key, lines in prompts.items()}, overrides

    def item_rows(self) -> Iterator[tuple]:
        index = self.dataset.sessions
        numbers = [item.number for item in ITEMS]
        rows = self.evaluations_qs.values_list("session_id", "block", *ITEM_KEYS)
        for session_pk, block, *answers in rows.iterator(chunk_size=CHUNK_SIZE):
            key = index.get(session_pk)
            if key is None:
                continue
            evaluation_id = evaluation_number(key.session_id, block)
            for number, answer in zip(numbers, answers, strict=True):
                yield (evaluation_id, number, answer)

    # Sessions and what belongs to them ----------------------------------------

    def session_rows(self) -> Iterator[tuple]:
        index, tz = self.dataset.sessions, self.dataset.timezone
        spent = ExpressionWrapper(
            F("step_records__completed_at") - F("step_records__entered_at"),
            output_field=DurationField(),
        )
        durations = {
            f"spent_{step}": Max(spent, filter=Q(step_records__step=step))
            for step, _label in cols.STEP_DURATIONS
        }
        rows = (
            self.sessions_qs.annotate(**durations)
            .order_by(self.order("pk"))
            .values_list(
                "pk",
                "language",
                "is_pilot",
                "step",
                "created_at",
                "ended_at",
                "first_system__name",
                "second_system__name",
                *durations,
            )
        )
        for pk, language, pilot, step, created, ended, first, second, *spans in rows.iterator(
            chunk_size=CHUNK_SIZE
        ):
            key = index[pk]
            yield (
                key.session_id,
                key.participant_id,
                key.administrator,
                language,
                key.consent_version,
                int(pilot),
                _status(step),
                local_date(created, tz),
                first,
                second,
                *(None if span is None else round(span.total_seconds(), 1) for span in spans),
                seconds_between(created, ended),
            )

    def prompt_log_rows(self, blocks) -> Iterator[tuple]:
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
            if key is not None:
                yield (key.session_id, block, system, *counts, int(overridden))

    def feedback_rows(self, feedback) -> Iterator[tuple]:
        index, tz = self.dataset.sessions, self.dataset.timezone
        rows = feedback.order_by(self.order("session_id")).values_list(
            "session_id", "experimenter_id", "submitted_at", *FEEDBACK.keys
        )
        for session_pk, experimenter_id, submitted, *answers in rows.iterator(
            chunk_size=CHUNK_SIZE
        ):
            key = index.get(session_pk)
            if key is not None:
                administrator = self.pseudonyms.get(experimenter_id, key.administrator)
                yield (key.session_id, administrator, local_date(submitted, tz), *answers)

    def demographics_rows(self, demographics) -> Iterator[tuple]:
        index = self.dataset.sessions
        rows = demographics.order_by(self.order("session_id")).values_list(
            "session_id", *DEMOGRAPHICS.keys
        )
        for session_pk, *answers in rows.iterator(chunk_size=CHUNK_SIZE):
            key = index.get(session_pk)
            if key is not None:
                yield (key.session_id, key.participant_id, *answers)


def _score(answers) -> tuple:
    """Scores of an evaluation the scoring sweep has not reached yet: the figures
    the sweep will store, copied by the same code (surveys.scores.set_scores)."""
    evaluation = Evaluation()
    set_scores(evaluation, score_answers(answers))
    return tuple(getattr(evaluation, name) for name in SCORE_FIELDS)
