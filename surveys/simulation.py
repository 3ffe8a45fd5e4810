"""Bots that run participants through the real protocol over HTTP (Django's
test client), through the same URLs, forms, CSRF checks and validation as a
person at the study's tablet.

Answers come from a latent-trait model: each evaluation has a latent
perceived reliability theta ~ N(0, trait_sd); dimension d adds the offset
seen in the paper's profile (Figure 6); the positive item is
round(2 (theta + offset_d) + e) and the negative item round(-2 (theta +
offset_d) + e), clipped to -2..+2, with e ~ N(0, noise). With the defaults
the analysis of simulated data looks like real data (alpha around .85).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.test import Client
from django.urls import reverse

from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.eligibility import ELIGIBILITY
from scoring.instruments.shs import DIMENSION_KEYS, ITEM_KEYS
from surveys.models import (
    ConsentText,
    Evaluation,
    PromptEntry,
    Study,
    StudyMembership,
    StudySession,
)
from surveys.steps import Step

# Mean dimension scores of the paper (section 7.3) as offsets of the latent trait.
PROFILE_OFFSETS = {"FA": 0.34, "SR": 0.18, "LC": 0.31, "DP": 0.09, "RG": 0.29}
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
class AnswerModel:
    trait_sd: float = 0.4
    noise: float = 1.0
    system_sd: float = 0.05

    def answers(self, rng: np.random.Generator, system_effect: float) -> dict[str, int]:
        theta = rng.normal(0.0, self.trait_sd) + system_effect
        values = []
        for key in DIMENSION_KEYS:
            level = 2.0 * (theta + PROFILE_OFFSETS[key])
            positive = level + rng.normal(0.0, self.noise)
            negative = -level + rng.normal(0.0, self.noise)
            values += [positive, negative]
        clipped = np.clip(np.rint(values), -2, 2).astype(int)
        return dict(zip(ITEM_KEYS, (int(v) for v in clipped), strict=True))


@dataclass
class SimulationResult:
    sessions: int = 0
    evaluations: int = 0
    seconds: float = 0.0
    per_system: dict[str, int] = field(default_factory=dict)


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
        self.client.force_login(experimenter)
        self.rng = rng
        self.secure = settings.SECURE_SSL_REDIRECT

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

    def run_participant(self, study: Study, model: AnswerModel, np_rng, system_effects) -> str:
        if "csrftoken" not in self.client.cookies:
            self.get(reverse("surveys:study_detail", args=[study.slug]))
        response = self.post(
            reverse("surveys:session_start", args=[study.slug]),
            {"language": self.rng.choice(study.languages)},
        )
        url = response.url
        self.get(url)
        session = StudySession.objects.select_related("first_system", "second_system").get(
            token=_token(url)
        )
        eligible = {c.key: "1" if c.eligible_answer else "0" for c in ELIGIBILITY}
        # What the consent page carries in its hidden field: the text it showed.
        text = ConsentText.current(study.pk, session.language)
        shown = text.fingerprint if text else ""
        self.post(url, {"step": Step.CONSENT, **eligible, "consent": "on", "shown_text": shown})
        for block, system in ((1, session.first_system), (2, session.second_system)):
            interaction_step, shs_step = f"block{block}_interaction", f"block{block}_shs"
            self._log_prompts(url, study, interaction_step)
            self.post(url, {"step": interaction_step})
            self.get(url)
            answers = model.answers(np_rng, system_effects[system.pk])
            self.post(url, {"step": shs_step, **{k: str(v) for k, v in answers.items()}})
        self.get(url)
        demographics = {
            question.key: str(self.rng.choice(question.codes)) for question in DEMOGRAPHICS
        }
        self.post(url, {"step": Step.DEMOGRAPHICS, **demographics})
        self.get(url)
        feedback = {
            key: str(self.rng.choices(range(1, len(w) + 1), weights=w)[0])
            for key, w in FEEDBACK_WEIGHTS.items()
        }
        self.post(url, {"step": Step.FEEDBACK, **feedback})
        return url

    def _log_prompts(self, url, study, step):
        self.get(url)
        categories = [PromptEntry.Category.VERIFIED] * study.min_verified_prompts + [
            PromptEntry.Category.GLATTEIS
        ] * study.min_glatteis_prompts
        categories += self.rng.choices(PromptEntry.Category.values, k=self.rng.randint(0, 3))
        for category in categories:
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


def simulate_study(
    *, study: Study, participants: int, seed: int, model: AnswerModel | None = None
) -> SimulationResult:
    model = model or AnswerModel()
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
    system_effects = {
        system.pk: float(np_rng.normal(0.0, model.system_sd)) for system in study.systems.all()
    }
    started = time.perf_counter()
    urls = []
    for number in range(participants):
        bot = bots[number % len(bots)]
        urls.append(bot.run_participant(study, model, np_rng, system_effects))
    result = SimulationResult(sessions=len(urls), seconds=time.perf_counter() - started)
    evaluations = Evaluation.objects.submitted().filter(
        session__token__in=[_token(url) for url in urls]
    )
    result.per_system = dict(Counter(evaluations.values_list("system__name", flat=True)))
    result.evaluations = sum(result.per_system.values())
    return result
