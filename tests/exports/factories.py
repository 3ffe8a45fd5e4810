"""Studies full of data, written straight through the ORM in bulk.

`populate_study` gives a study the sessions that `study_plan` lists: complete
sessions (consent to demographics, step records, prompt logs, two scored
evaluations each, administrator feedback, demographics) and, with
`extras=True`, the edge cases an export must treat specially. It
records every identifier that must never leave through an export
(participant codes, session tokens, e-mails, names).

The data is the same on every run for a given seed: the tests in
tests/exports compare exports with what tests/exports/expected.py works out
from the database.
"""

import random
from dataclasses import dataclass, field
from datetime import timedelta
from typing import NamedTuple

from django.utils import timezone

from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import ITEM_KEYS
from scoring.scores.engine import score_answers
from surveys.models import (
    ConsentRecord,
    ConsentText,
    DemographicsResponse,
    Evaluation,
    FeedbackResponse,
    InteractionBlock,
    Participant,
    PromptEntry,
    StepRecord,
    Study,
    StudyMembership,
    StudySession,
    User,
)
from surveys.scores import set_scores
from surveys.steps import DEFAULT_TARGET_MINUTES, TIMED_STEPS, Step
from tests.exports.session_plans import study_plan

EXPERIMENTER_NAMES = [
    ("Erika", "Mustermann"),
    ("Jonas", "Oberhuber"),
    ("Amélie", "Durand"),
]
LANGUAGES = ("en", "de", "fr")
BATCH = 5000
# Sessions start this far apart, all of them in the past.
SESSION_INTERVAL = timedelta(minutes=50)


class PromptShape(NamedTuple):
    category: str
    follow_up: bool = False
    source_request: bool = False
    challenge: bool = False


# The six prompts of every block, in order. The first one's text is the next of
# `prompt_texts` (if given), the second one asks for the area of Austria.
BLOCK_PROMPTS = [
    PromptShape(PromptEntry.Category.VERIFIED),
    PromptShape(PromptEntry.Category.VERIFIED, source_request=True),
    PromptShape(PromptEntry.Category.VERIFIED, follow_up=True),
    PromptShape(PromptEntry.Category.GLATTEIS),
    PromptShape(PromptEntry.Category.GLATTEIS, source_request=True),
    PromptShape(PromptEntry.Category.GLATTEIS, challenge=True),
]


@dataclass
class StudyData:
    study: Study
    experimenters: list[User]
    sessions: list[StudySession] = field(default_factory=list)
    # Identifiers that must never appear in an export.
    secrets: set[str] = field(default_factory=set)
    prompt_texts: list[str] = field(default_factory=list)
    override_reasons: list[str] = field(default_factory=list)

    @property
    def complete_sessions(self):
        return [s for s in self.sessions if s.step == Step.COMPLETE and not s.is_pilot]


@dataclass
class _Rows:
    """Rows built in memory, saved in bulk once every session is built."""

    steps: list[StepRecord] = field(default_factory=list)
    blocks: list[InteractionBlock] = field(default_factory=list)
    evaluations: list[Evaluation] = field(default_factory=list)
    feedback: list[FeedbackResponse] = field(default_factory=list)
    demographics: list[DemographicsResponse] = field(default_factory=list)


def make_experimenters(study: Study, count: int = 3, tag: str = "") -> list[User]:
    users = []
    for number in range(count):
        first, last = EXPERIMENTER_NAMES[number % len(EXPERIMENTER_NAMES)]
        user = User.objects.create_user(
            email=f"{first.lower()}.{last.lower()}{number}{tag}@uni-graz.example",
            password=None,
            first_name=first,
            last_name=f"{last}{number}" if number >= len(EXPERIMENTER_NAMES) else last,
        )
        StudyMembership.objects.create(
            user=user, study=study, role=StudyMembership.Role.EXPERIMENTER
        )
        users.append(user)
    return users


def answers_for(rng: random.Random) -> list[int]:
    """Answers with a common factor, so the analysis has structure to find."""
    level = rng.choice([-1, 0, 0, 1, 1, 2])
    answers = []
    for index in range(len(ITEM_KEYS)):
        value = level + rng.choice([-1, 0, 0, 1])
        value = -value if index % 2 else value  # negative items point the other way
        answers.append(max(-2, min(2, value)))
    return answers


def populate_study(
    study: Study,
    *,
    sessions: int,
    seed: int = 7,
    extras: bool = True,
    experimenters: list[User] | None = None,
    prompt_texts: list[str] | None = None,
    system_names: list[str] | None = None,
    evaluations_only: bool = False,
) -> StudyData:
    """Add `sessions` complete sessions (2 evaluations each) and, with extras, the edge cases.

    `evaluations_only` leaves out step records, prompt logs, feedback and
    demographics (for benchmarks of the one-table CSV).
    """
    # The draws from `rng` come in a fixed order (both systems of every session,
    # then each session's step times, SHS forms and questionnaires in turn):
    # reordering them changes the generated values.
    rng = random.Random(seed)
    data = StudyData(study=study, experimenters=experimenters or make_experimenters(study))
    _rename_systems(study, system_names or [])
    plans = study_plan(sessions, extras=extras)
    data.sessions = _create_sessions(study, plans, data.experimenters, rng)
    _record_secrets(data)
    rows = _Rows()
    for session, plan in zip(data.sessions, plans, strict=True):
        rows.steps += _step_records(session, plan, rng)
        _build_blocks(session, plan, rng, rows, data)
        if plan.step == Step.COMPLETE:
            rows.feedback.append(_feedback(session, rng))
            rows.demographics.append(_demographics(session, rng))
    Evaluation.objects.bulk_create(rows.evaluations, batch_size=BATCH)
    ConsentRecord.objects.bulk_create(_consents(study, data.sessions, plans), batch_size=BATCH)
    if evaluations_only:
        return data
    StepRecord.objects.bulk_create(rows.steps, batch_size=BATCH)
    InteractionBlock.objects.bulk_create(rows.blocks, batch_size=BATCH)
    prompts = _prompts(rows.blocks, prompt_texts or [], data)
    PromptEntry.objects.bulk_create(prompts, batch_size=BATCH)
    FeedbackResponse.objects.bulk_create(rows.feedback, batch_size=BATCH)
    DemographicsResponse.objects.bulk_create(rows.demographics, batch_size=BATCH)
    return data


def _rename_systems(study: Study, names: list[str]) -> None:
    for system, name in zip(study.systems.order_by("pk"), names, strict=False):
        system.name = name
        system.save(update_fields=["name"])


def _create_sessions(study, plans, experimenters, rng) -> list[StudySession]:
    """One session per plan, experimenters and languages taken in turn."""
    systems = list(study.systems.order_by("pk"))
    start = timezone.now() - SESSION_INTERVAL * len(plans) - timedelta(days=1)
    participants = iter(
        Participant.objects.bulk_create(
            [Participant(study=study) for plan in plans if plan.has_participant],
            batch_size=BATCH,
        )
    )
    rows = []
    for number, plan in enumerate(plans):
        first, second = rng.sample(systems, 2)
        created = start + SESSION_INTERVAL * number
        rows.append(
            StudySession(
                study=study,
                participant=next(participants) if plan.has_participant else None,
                experimenter=experimenters[number % len(experimenters)],
                language=LANGUAGES[number % len(LANGUAGES)],
                step=plan.step,
                first_system=first,
                second_system=second,
                allocation_number=number + 1,
                is_pilot=plan.pilot,
                created_at=created,
                step_entered_at=created,
                last_activity_at=created,
                ended_at=created + timedelta(minutes=plan.minutes),
            )
        )
    return StudySession.objects.bulk_create(rows, batch_size=BATCH)


def _record_secrets(data: StudyData) -> None:
    for session in data.sessions:
        data.secrets.add(session.token)
        if session.participant is not None:
            data.secrets.add(session.participant.code)
    for user in data.experimenters:
        data.secrets.update({user.email, user.first_name, user.last_name})


def _step_records(session, plan, rng) -> list[StepRecord]:
    """Each timed step about its target time; a session that reached no block
    has only its consent step."""
    records = []
    moment = session.created_at
    for step in TIMED_STEPS if plan.blocks else [Step.CONSENT]:
        spent = timedelta(seconds=DEFAULT_TARGET_MINUTES[step] * 60 + rng.randint(-90, 90))
        records.append(
            StepRecord(
                session=session,
                step=step,
                entered_at=moment,
                completed_at=moment + spent,
                target_minutes=DEFAULT_TARGET_MINUTES[step],
            )
        )
        moment += spent
    return records


def _build_blocks(session, plan, rng, rows: _Rows, data: StudyData) -> None:
    """The interaction blocks the session reached, each with its SHS form if it got one."""
    for block in range(1, plan.blocks + 1):
        system = session.first_system if block == 1 else session.second_system
        reason = ""
        if block == 2 and plan.second_block_stopped_early:
            number = session.allocation_number - 1
            reason = f"Participant tired, stopped early (session {number})"
            data.override_reasons.append(reason)
        rows.blocks.append(
            InteractionBlock(
                session=session,
                block=block,
                system=system,
                started_at=session.created_at,
                ended_at=session.created_at + timedelta(minutes=15),
                override_reason=reason,
            )
        )
        if plan.has_form(block):
            rows.evaluations.append(_evaluation(session, plan, block, system, rng))


def _evaluation(session, plan, block, system, rng) -> Evaluation:
    submitted = block <= plan.submitted
    answers = answers_for(rng)
    shown = session.created_at + timedelta(minutes=20 * block)
    evaluation = Evaluation(
        session=session,
        block=block,
        system=system,
        language=session.language,
        first_displayed_at=shown,
        submitted_at=shown + timedelta(seconds=rng.randint(120, 420)) if submitted else None,
        **dict(zip(ITEM_KEYS, answers, strict=True)),
    )
    if submitted and not (block == 2 and plan.second_shs_unscored):
        set_scores(evaluation, score_answers(answers))
        evaluation.scored_at = evaluation.submitted_at
    return evaluation


def _feedback(session, rng) -> FeedbackResponse:
    return FeedbackResponse(
        session=session,
        experimenter=session.experimenter,
        submitted_at=session.created_at + timedelta(minutes=40),
        **{q.key: rng.choice(q.codes[:3]) for q in FEEDBACK},
    )


def _demographics(session, rng) -> DemographicsResponse:
    return DemographicsResponse(
        session=session, **{q.key: rng.choice(q.codes) for q in DEMOGRAPHICS}
    )


def _consents(study, sessions, plans) -> list[ConsentRecord]:
    """Every session that reached the interaction consented to its language's current text."""
    texts = {}
    for language in LANGUAGES:
        texts[language] = ConsentText.current(study.pk, language) or ConsentText.objects.create(
            study=study,
            language=language,
            information_sheet=f"Information [{language}]",
            consent_text=f"I agree [{language}].",
        )
    return [
        ConsentRecord(
            session=session,
            consent_text=texts[session.language],
            version=texts[session.language].version,
            language=session.language,
            consented_at=session.created_at + timedelta(minutes=3),
        )
        for session, plan in zip(sessions, plans, strict=True)
        if plan.blocks
    ]


def _prompts(blocks, texts: list[str], data: StudyData) -> list[PromptEntry]:
    prompts = []
    for index, interaction in enumerate(blocks):
        for position, shape in enumerate(BLOCK_PROMPTS):
            text = ""
            if texts and position == 0:
                text = texts[index % len(texts)]
            elif position == 1:
                text = f"What is the area of Austria? ({index})"
            if text:
                data.prompt_texts.append(text)
            prompts.append(
                PromptEntry(
                    interaction=interaction,
                    category=shape.category,
                    text=text,
                    is_follow_up=shape.follow_up,
                    is_source_request=shape.source_request,
                    is_challenge=shape.challenge,
                    created_at=interaction.started_at + timedelta(seconds=position),
                )
            )
    return prompts
