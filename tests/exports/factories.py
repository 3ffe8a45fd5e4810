"""Studies full of data, written straight through the ORM in bulk.

`populate_study` gives a study complete sessions (consent to demographics,
step records, prompt logs, two scored evaluations each, administrator
feedback, demographics) and, with `extras=True`, the cases an export must
treat specially: a pilot session, a withdrawal tombstone, a screen-out, an
abandoned session with one submitted and one half-filled SHS, and an
unscored evaluation. It records every identifier that must never leave
through an export (participant codes, session tokens, e-mails, names).
"""

import random
from dataclasses import dataclass, field
from datetime import timedelta

from django.utils import timezone

from scoring.engine import score_answers
from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import ITEM_KEYS
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

EXPERIMENTER_NAMES = [
    ("Erika", "Mustermann"),
    ("Jonas", "Oberhuber"),
    ("Amélie", "Durand"),
]
LANGUAGES = ("en", "de", "fr")


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
        if plan["blocks"]
    ]


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
    rng = random.Random(seed)
    experimenters = experimenters or make_experimenters(study)
    data = StudyData(study=study, experimenters=experimenters)
    systems = list(study.systems.order_by("pk"))
    if system_names:
        for system, name in zip(systems, system_names, strict=False):
            system.name = name
            system.save(update_fields=["name"])
    plans = [
        {"step": Step.COMPLETE, "pilot": False, "blocks": 2, "submitted": 2}
        for _ in range(sessions)
    ]
    if extras:
        plans += [
            {"step": Step.COMPLETE, "pilot": True, "blocks": 2, "submitted": 2},
            {"step": Step.WITHDRAWN, "pilot": False, "blocks": 0, "submitted": 0},
            {"step": Step.INELIGIBLE, "pilot": False, "blocks": 0, "submitted": 0},
            {"step": Step.ABANDONED, "pilot": False, "blocks": 2, "submitted": 1},
        ]
    # Sessions 50 minutes apart, all of them in the past.
    start = timezone.now() - timedelta(minutes=50 * len(plans)) - timedelta(days=1)
    participants = Participant.objects.bulk_create(
        [Participant(study=study) for plan in plans if plan["step"] != Step.WITHDRAWN],
        batch_size=5000,
    )
    participant_iter = iter(participants)
    session_rows = []
    for number, plan in enumerate(plans):
        first, second = rng.sample(systems, 2)
        created = start + timedelta(minutes=50 * number)
        has_data = plan["step"] != Step.WITHDRAWN
        session_rows.append(
            StudySession(
                study=study,
                participant=next(participant_iter) if has_data else None,
                experimenter=experimenters[number % len(experimenters)],
                language=LANGUAGES[number % len(LANGUAGES)],
                step=plan["step"],
                first_system=first,
                second_system=second,
                allocation_number=number + 1,
                is_pilot=plan["pilot"],
                created_at=created,
                step_entered_at=created,
                last_activity_at=created,
                ended_at=created + timedelta(minutes=48 if plan["step"] == Step.COMPLETE else 45),
            )
        )
    created_sessions = StudySession.objects.bulk_create(session_rows, batch_size=5000)
    data.sessions = created_sessions
    for session in created_sessions:
        data.secrets.add(session.token)
        if session.participant is not None:
            data.secrets.add(session.participant.code)
    for user in experimenters:
        data.secrets.update({user.email, user.first_name, user.last_name})

    steps, blocks, prompts, evaluations, feedback, demographics = [], [], [], [], [], []
    texts = prompt_texts or []
    for number, (session, plan) in enumerate(zip(created_sessions, plans, strict=True)):
        moment = session.created_at
        for step in TIMED_STEPS if plan["blocks"] else [Step.CONSENT]:
            spent = timedelta(seconds=DEFAULT_TARGET_MINUTES[step] * 60 + rng.randint(-90, 90))
            steps.append(
                StepRecord(
                    session=session,
                    step=step,
                    entered_at=moment,
                    completed_at=moment + spent,
                    target_minutes=DEFAULT_TARGET_MINUTES[step],
                )
            )
            moment += spent
        for block in range(1, plan["blocks"] + 1):
            system = session.first_system if block == 1 else session.second_system
            reason = ""
            if number % 5 == 3 and block == 2:
                reason = f"Participant tired, stopped early (session {number})"
                data.override_reasons.append(reason)
            blocks.append(
                InteractionBlock(
                    session=session,
                    block=block,
                    system=system,
                    started_at=session.created_at,
                    ended_at=session.created_at + timedelta(minutes=15),
                    override_reason=reason,
                )
            )
            if block <= plan["submitted"] or plan["step"] == Step.ABANDONED:
                submitted = block <= plan["submitted"]
                answers = answers_for(rng)
                shown = session.created_at + timedelta(minutes=20 * block)
                evaluation = Evaluation(
                    session=session,
                    block=block,
                    system=system,
                    language=session.language,
                    first_displayed_at=shown,
                    submitted_at=shown + timedelta(seconds=rng.randint(120, 420))
                    if submitted
                    else None,
                    **dict(zip(ITEM_KEYS, answers, strict=True)),
                )
                # One submitted evaluation stays unscored: the sweep has not reached it.
                if submitted and not (extras and number == 1 and block == 2):
                    _apply_scores(evaluation, answers)
                evaluations.append(evaluation)
        if plan["step"] == Step.COMPLETE:
            feedback.append(
                FeedbackResponse(
                    session=session,
                    experimenter=session.experimenter,
                    submitted_at=session.created_at + timedelta(minutes=40),
                    **{q.key: rng.choice(q.codes[:3]) for q in FEEDBACK},
                )
            )
            demographics.append(
                DemographicsResponse(
                    session=session, **{q.key: rng.choice(q.codes) for q in DEMOGRAPHICS}
                )
            )
    Evaluation.objects.bulk_create(evaluations, batch_size=5000)
    ConsentRecord.objects.bulk_create(_consents(study, created_sessions, plans), batch_size=5000)
    if evaluations_only:
        return data
    StepRecord.objects.bulk_create(steps, batch_size=5000)
    InteractionBlock.objects.bulk_create(blocks, batch_size=5000)
    for index, interaction in enumerate(blocks):
        for position in range(6):
            category = (
                PromptEntry.Category.VERIFIED if position < 3 else PromptEntry.Category.GLATTEIS
            )
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
                    category=category,
                    text=text,
                    is_follow_up=position == 2,
                    is_source_request=position in (1, 4),
                    is_challenge=position == 5,
                    created_at=interaction.started_at + timedelta(seconds=position),
                )
            )
    PromptEntry.objects.bulk_create(prompts, batch_size=5000)
    FeedbackResponse.objects.bulk_create(feedback, batch_size=5000)
    DemographicsResponse.objects.bulk_create(demographics, batch_size=5000)
    return data


def _apply_scores(evaluation: Evaluation, answers: list[int]) -> None:
    set_scores(evaluation, score_answers(answers))
    evaluation.scored_at = evaluation.submitted_at
