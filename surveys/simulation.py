"""Bots that run participants through the real protocol over HTTP (Django's
test client), through the same URLs, forms, CSRF checks and validation as a
person at the study's tablet.

Answers come from the latent model of surveys/answer_model.py, calibrated to
the paper's dimension profile, Table 6 and paired-item correlations, with a
participant effect and a system effect (surveys/answer_effects.py). Each
participant's session runs on a simulated clock (time-machine), in the past
and at the pace of the paper's sessions: about 15 minutes per interaction
block and an SHS completion time of 4.2 min (SD 1.8), so durations on the
monitor, in the report and in exports look like a real study's. A study's
pre-registration comes first: no session is dated before `not_before`
(docs/design/criterion.md §13.5).
"""

from __future__ import annotations

import datetime
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

import numpy as np
import time_machine
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.eligibility import ELIGIBILITY
from scoring.instruments.shs import ITEM_KEYS
from surveys.answer_effects import (
    DEFAULT_EFFECTS,
    AnswerEffects,
    EffectDraws,
    factor_shift,
    system_offsets,
)
from surveys.answer_model import CALIBRATED, LatentParameters, shs_minutes
from surveys.models import (
    ConsentText,
    Evaluation,
    PromptEntry,
    Study,
    StudyMembership,
    StudySession,
)
from surveys.readiness import scales_lacking
from surveys.steps import Step

# Administrator feedback of the paper (Table 5, Figures 1-5): weights of codes 1, 2, ...
FEEDBACK_WEIGHTS = {
    "clarity": [87.2, 12.8, 0, 0, 0],
    "relevance": [83.0, 14.9, 2.1, 0, 0],
    "response_options": [93.6, 4.3, 2.1, 0, 0],
    "explanation_needed": [66.0, 31.9, 2.1, 0],
    "demographics_length": [97.9, 2.1, 0],
}


class SimulationError(Exception):
    """The platform refused a bot's request that a person's would have passed."""


@dataclass
class SimulationResult:
    sessions: int = 0
    evaluations: int = 0
    seconds: float = 0.0
    per_system: dict[str, int] = field(default_factory=dict)
    # Below 1 when the sessions had to fit between `not_before` and the end:
    # the simulated clock ran at this share of the paper's pace.
    pace: float = 1.0
    first_start: datetime.datetime | None = None


# A session takes about 45 minutes; one starts every 75 per experimenter.
SLOT = datetime.timedelta(minutes=75)


@dataclass
class Pace:
    """The simulated clock of one session: time passes only when a bot waits."""

    clock: time_machine.Traveller
    rng: np.random.Generator
    scale: float = 1.0

    def minutes(self, mean: float, sd: float) -> float:
        return max(mean / 4, float(self.rng.normal(mean, sd)))

    def shs(self) -> float:
        return shs_minutes(self.rng)

    def wait(self, minutes: float, *, at_least: float = 0.0) -> None:
        """`minutes` at the run's pace; `at_least` what the platform requires whatever the pace."""
        self.clock.shift(datetime.timedelta(minutes=max(minutes * self.scale, at_least)))

    def wait_days(self, days: float) -> None:
        """Days the platform counts (a retest's interval): never at a faster pace."""
        self.clock.shift(datetime.timedelta(days=days))


def _token(session_url: str) -> str:
    return session_url.rstrip("/").rsplit("/", 1)[-1]


def _host() -> str:
    hosts = [host for host in settings.ALLOWED_HOSTS if host and "*" not in host]
    if "localhost" in hosts or not hosts:
        return "localhost"
    return hosts[0].lstrip(".")


class Bot:
    """One experimenter's browser, running participants one after the other."""

    def __init__(self, experimenter, rng: random.Random):
        self.client = Client(HTTP_HOST=_host(), enforce_csrf_checks=True)
        self.experimenter = experimenter
        self.client.force_login(experimenter)
        self.rng = rng
        self.secure = settings.SECURE_SSL_REDIRECT

    def log_in_again(self) -> None:
        """Another day at the lab (a retest weeks later): the login has expired."""
        self.client.force_login(self.experimenter)

    def get(self, url):
        response = self.client.get(url, secure=self.secure)
        if response.status_code != 200:
            raise SimulationError(f"GET {url} answered {response.status_code}")
        return response

    def post(self, url, data):
        token = self.client.cookies["csrftoken"].value
        response = self.client.post(url, {**data, "csrfmiddlewaretoken": token}, secure=self.secure)
        if response.status_code != 302:
            raise SimulationError(f"POST {url} answered {response.status_code}: {data}")
        return response

    def run_participant(
        self,
        study: Study,
        answers: np.ndarray | Callable[[StudySession], np.ndarray],
        pace: Pace,
        language: str | None = None,
        after_shs: Callable[[int, str], None] | None = None,
    ) -> str:
        """One participant's session; `answers` holds the two evaluations' answers,
        or gives them for the session once its systems are allocated. `after_shs`
        (block, session URL) answers what the study gives after a block's SHS."""
        if "csrftoken" not in self.client.cookies:
            self.get(reverse("surveys:study_detail", args=[study.slug]))
        language = language or self.rng.choice(study.languages)
        response = self.post(
            reverse("surveys:session_start", args=[study.slug]),
            {"language": _startable(study, language)},
        )
        url = response.url
        _move_to(_token(url), language)
        self.get(url)
        pace.wait(pace.minutes(3.0, 1.0))
        session = StudySession.objects.get(token=_token(url))
        if callable(answers):
            answers = answers(session)
        eligible = {c.key: "1" if c.eligible_answer else "0" for c in ELIGIBILITY}
        # What the consent page carries in its hidden field: the text it showed.
        text = ConsentText.current(study.pk, session.language)
        shown = text.fingerprint if text else ""
        self.post(url, {"step": Step.CONSENT, **eligible, "consent": "on", "shown_text": shown})
        for block, block_answers in zip((1, 2), answers, strict=True):
            interaction_step, shs_step = f"block{block}_interaction", f"block{block}_shs"
            self._log_prompts(url, study, interaction_step, pace)
            self.post(url, {"step": interaction_step, **_finish_reason(study)})
            self.get(url)  # the SHS is first displayed: its completion time starts
            pace.wait(pace.shs())
            given = {key: str(value) for key, value in zip(ITEM_KEYS, block_answers, strict=True)}
            self.post(url, {"step": shs_step, **given})
            if after_shs is not None:
                after_shs(block, url)
        self.get(url)
        pace.wait(pace.minutes(1.5, 0.5))
        demographics = {
            question.key: str(self.rng.choice(question.codes)) for question in DEMOGRAPHICS
        }
        self.post(url, {"step": Step.DEMOGRAPHICS, **demographics})
        self.get(url)
        pace.wait(pace.minutes(3.0, 1.0))
        feedback = {
            key: str(self.rng.choices(range(1, len(w) + 1), weights=w)[0])
            for key, w in FEEDBACK_WEIGHTS.items()
        }
        self.post(url, {"step": Step.FEEDBACK, **feedback})
        return url

    def _log_prompts(self, url, study, step, pace: Pace):
        self.get(url)
        if study.is_naturalistic:
            # No categories to log (docs/design/remote.md §11.5): the block's time passes,
            # at least the study's minimum.
            pace.wait(pace.minutes(15.0, 2.5), at_least=study.min_minutes + 0.5)
            return
        categories = [PromptEntry.Category.VERIFIED] * study.min_verified_prompts + [
            PromptEntry.Category.GLATTEIS
        ] * study.min_glatteis_prompts
        categories += self.rng.choices(PromptEntry.Category.values, k=self.rng.randint(0, 3))
        # The block's ~15 minutes are spent between the prompts.
        interval = pace.minutes(15.0, 2.5) / (len(categories) + 1)
        for category in categories:
            pace.wait(interval)
            self.post(
                reverse("surveys:session_prompt_add", args=[_token(url)]),
                {
                    "step": step,
                    "category": category,
                    "is_follow_up": "on" if self.rng.random() < 0.3 else "",
                    "is_source_request": "on" if self.rng.random() < 0.3 else "",
                    "is_challenge": "on" if self.rng.random() < 0.2 else "",
                },
            )
        pace.wait(interval)


def _startable(study: Study, language: str) -> str:
    """`language`, or one a session of the study can start in when a companion
    scale lacks its wording: the platform refuses such a real session
    (surveys.readiness.language_refusal), a simulated study may run it
    (docs/design/validation-analysis.md §14.9), so the session starts in another and moves."""
    if not scales_lacking(study, language):
        return language
    return next((code for code in study.languages if not scales_lacking(study, code)), language)


def _move_to(token: str, language: str) -> None:
    # Before the consent page is first shown: the whole session is in `language`.
    StudySession.objects.filter(token=token).exclude(language=language).update(language=language)


def _finish_reason(study: Study) -> dict:
    """A bot sends no chat messages: a naturalistic block of a connected system
    ends below its turn minimum, so it says why (recorded only when it is below)."""
    if study.is_naturalistic:
        return {"override_reason": "Simulated session: no chat messages were sent."}
    return {}


class AnswerSource(Protocol):
    """Answers from elsewhere than `model`: the latent model of the validation
    programme (validation.simulation, docs/design/validation-analysis.md §14.9) with its companion
    scales and retest wave. `number` is the participant's, from 0."""

    # Time kept after the last session so that what follows a session (a retest
    # wave) lies in the past too.
    reserve: datetime.timedelta

    def language(self, number: int) -> str: ...

    def shs(self, number: int, session: StudySession) -> np.ndarray:
        """(2, 10) answers -2..+2 for the session's blocks, its systems allocated."""

    def after_shs(self, number: int, bot: Bot, pace: Pace, block: int, url: str) -> None: ...

    def after_session(self, number: int, bot: Bot, pace: Pace, url: str) -> None: ...


def simulate_study(
    *,
    study: Study,
    participants: int,
    seed: int,
    model: LatentParameters = CALIBRATED,
    effects: AnswerEffects = DEFAULT_EFFECTS,
    until: datetime.datetime | None = None,
    not_before: datetime.datetime | None = None,
    source: AnswerSource | None = None,
) -> SimulationResult:
    """Run `participants` sessions, rotating among the study's experimenters.

    Each experimenter runs one session per SLOT, back to back, so that the
    last sessions end shortly before `until` (default: now), less the source's
    reserve, and every timestamp lies in the past. No session starts before
    `not_before` (the study's pre-registration): when the schedule would, it
    is fitted between the two at a faster pace (`SimulationResult.pace`).
    `effects` shape the calibrated model's answers (not a source's).
    """
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    members = list(study.memberships.select_related("user").order_by("user__email"))
    # Experimenters run the sessions; a study without any is run by its coordinators.
    experimenters = [
        member.user for member in members if member.role == StudyMembership.Role.EXPERIMENTER
    ] or [member.user for member in members]
    if not experimenters:
        raise SimulationError("the study has no members to run sessions")
    bots = [Bot(user, random.Random(rng.random())) for user in experimenters]
    answers = _answers(study, participants, np_rng, model, effects)
    slots = -(-participants // len(bots))
    end = (until or timezone.now()) - (source.reserve if source else datetime.timedelta(0))
    first_start, scale = _schedule(study, end, slots, not_before)
    started = time.perf_counter()
    urls = []
    for number in range(participants):
        bot = bots[number % len(bots)]
        start = first_start + SLOT * scale * (number // len(bots))
        with time_machine.travel(start, tick=False) as clock:
            pace = Pace(clock, np_rng, scale)
            if source is None:
                urls.append(bot.run_participant(study, partial(answers, number), pace))
                continue
            given = partial(source.shs, number)
            after = partial(source.after_shs, number, bot, pace)
            urls.append(bot.run_participant(study, given, pace, source.language(number), after))
            source.after_session(number, bot, pace, urls[-1])
    result = SimulationResult(
        sessions=len(urls),
        seconds=time.perf_counter() - started,
        pace=scale,
        first_start=first_start,
    )
    evaluations = Evaluation.objects.submitted().filter(
        session__token__in=[_token(url) for url in urls]
    )
    result.per_system = dict(Counter(evaluations.values_list("system__name", flat=True)))
    result.evaluations = sum(result.per_system.values())
    return result


def _answers(
    study: Study,
    participants: int,
    rng: np.random.Generator,
    model: LatentParameters,
    effects: AnswerEffects,
) -> Callable[[int, StudySession], np.ndarray]:
    """Participant `number`'s two answers once the session's systems are known:
    each system shifts the answers by its offset, the active systems spread
    evenly in the order they were added (surveys/answer_effects.py)."""
    draws = EffectDraws(rng, participants, effects=effects, model=model)
    systems = list(study.systems.filter(active=True).order_by("pk").values_list("pk", flat=True))
    shift = factor_shift(model, effects.system_difference)
    offsets = dict(zip(systems, system_offsets(len(systems), shift), strict=True))

    def given(number: int, session: StudySession) -> np.ndarray:
        pair = (session.first_system_id, session.second_system_id)
        return draws.answers(number, tuple(float(offsets.get(pk, 0.0)) for pk in pair))

    return given


# Between a pre-registration and the first simulated session.
AFTER_REGISTRATION = datetime.timedelta(seconds=1)


def _schedule(
    study: Study,
    end: datetime.datetime,
    slots: int,
    not_before: datetime.datetime | None,
) -> tuple[datetime.datetime, float]:
    """The first session's start and the pace (1 = the paper's) of a schedule of
    `slots` back-to-back sessions per experimenter that ends by `end`.

    After `not_before` when given: a simulated study, like a real one, follows
    its pre-registration. When the time since it is too short for the paper's
    pace, the whole schedule (the gaps and each session's waits) runs faster in
    proportion, keeping only the minutes the platform itself requires of a
    naturalistic block (which are then kept out of the time shared out).
    """
    needed = SLOT * (slots + 1)
    first_start = end - needed
    if not_before is None or first_start >= not_before:
        return first_start, 1.0
    window = end - not_before - AFTER_REGISTRATION
    if study.is_naturalistic:
        window -= datetime.timedelta(minutes=2 * (study.min_minutes + 0.5))
    if window <= datetime.timedelta(0):
        raise SimulationError(
            f"the study's pre-registration was saved at {not_before.isoformat(timespec='seconds')}"
            f", too recently for simulated sessions (and their retests or minimum block times) "
            f"to run after it and end by {end.isoformat(timespec='seconds')}"
        )
    return not_before + AFTER_REGISTRATION, window / needed
