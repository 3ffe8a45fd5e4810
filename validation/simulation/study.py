"""`simulate_study --latent` (docs/design/validation-analysis.md §14.9): the bots of
surveys.simulation give the latent model's answers through the real protocol
over HTTP: each session's SHS for the systems the platform allocated it, the
study's companion scales after each SHS, and the retest when it is due, on the
simulation's clock (the session's time plus the days until the retest), never
the wall clock's.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Sequence

import numpy as np
from django.urls import reverse

from scoring.instruments.companions import COMPANION_SCALES, missing_languages
from scoring.instruments.shs import ITEM_KEYS
from surveys.models import Study, StudySession
from surveys.simulation import Bot, Pace, SimulationError
from validation.simulation.latent import STORED_OFFSET, LatentSample, LatentStudy

DEFAULT_RETEST_DAYS = 14
# Most participants of a retest wave come back, not all: the analyses must cope.
RETEST_SHARE = 0.8


def prepare_study(
    study: Study, *, languages: Sequence[str], companions: Sequence[str], retest: bool
) -> None:
    """Check the options against the study and give it the companion scales and
    retest wave asked for. Raises SimulationError, changing nothing, when the
    study cannot run them."""
    missing = [code for code in languages if code not in study.languages]
    if missing:
        raise SimulationError(
            f"the study does not offer {', '.join(missing)} (it offers "
            f"{', '.join(study.languages)}): add the languages to the study first"
        )
    unknown = [key for key in companions if key not in COMPANION_SCALES]
    if unknown:
        raise SimulationError(
            f"no companion scale {', '.join(unknown)}: choose from {', '.join(COMPANION_SCALES)}"
        )
    changed = []
    if companions and list(companions) != list(study.companion_scales):
        if study.sessions.exists():
            raise SimulationError(
                f"the study has sessions already: its companion scales "
                f"({', '.join(study.companion_scales) or 'none'}) can no longer change"
            )
        study.companion_scales = list(companions)
        changed.append("companion_scales")
    if retest and study.retest_after_days is None:
        study.retest_after_days = DEFAULT_RETEST_DAYS
        changed.append("retest_after_days")
    if changed:
        study.save(update_fields=changed)


class LatentAnswers:
    """The answer source of surveys.simulation.simulate_study for a latent study."""

    def __init__(
        self, study: Study, *, participants: int, seed: int, languages: Sequence[str], retest: bool
    ):
        self.study = study
        self.latent = LatentStudy(
            participants,
            seed=seed,
            languages=tuple(languages) or tuple(study.languages),
            scales=tuple(study.companion_scales),
            retest_share=RETEST_SHARE if retest and study.has_retest else 0.0,
            retest_after_days=study.retest_after_days or DEFAULT_RETEST_DAYS,
        )
        self.samples: dict[int, LatentSample] = {}
        self.sessions: dict[int, StudySession] = {}
        days = math.ceil(self.latent.retest_days.max()) + 1 if self.latent.retested.any() else 0
        self.reserve = datetime.timedelta(days=days)

    def summary(self) -> list[str]:
        """What the command says about the run besides the sessions it counts."""
        latent = self.latent
        lines = [
            "Answers from the latent model of docs/design/validation-analysis.md §14.9 "
            "(known parameters): "
            f"languages {', '.join(sorted(set(latent.languages)))}; companion scales "
            f"{', '.join(latent.scales) or 'none'}; "
            f"{int(latent.retested.sum())} participants came back for the retest."
        ]
        unshipped = missing_languages(latent.scales, sorted(set(latent.languages)))
        for key, codes in unshipped.items():
            lines.append(
                f"  {key}: no published wording in {', '.join(codes)}. Simulated answers are "
                "numbers from the model, shown to no one; a study with people could not "
                "offer these languages with this scale (the readiness check)."
            )
        return lines

    def language(self, number: int) -> str:
        return str(self.latent.languages[number])

    def shs(self, number: int, session: StudySession) -> np.ndarray:
        systems = np.array([[session.first_system.name, session.second_system.name]])
        self.samples[number] = self.latent.sample(systems, participants=[number])
        self.sessions[number] = session
        return self.samples[number].answers - STORED_OFFSET

    def after_shs(self, number: int, bot: Bot, pace: Pace, block: int, url: str) -> None:
        """The study's companion scales, one page each in its order (§14.1)."""
        sample = self.samples[number]
        for key in self.study.companion_scales:
            bot.get(url)
            pace.wait(pace.minutes(1.5, 0.5))
            codes = sample.companion_items[key][block - 1]
            items = COMPANION_SCALES[key].item_keys
            given = {item: str(code) for item, code in zip(items, codes, strict=True)}
            bot.post(url, {"step": f"block{block}_shs", "scale": key, **given})

    def after_session(self, number: int, bot: Bot, pace: Pace, url: str) -> None:
        """The retest, once due: the participant quotes their code at the lab."""
        if not self.latent.retested[number]:
            return
        pace.wait_days(float(self.latent.retest_days[number]))
        session = StudySession.objects.select_related("participant").get(
            pk=self.sessions[number].pk
        )
        bot.log_in_again()
        start = reverse("surveys:retest_start", args=[self.study.slug])
        page = bot.post(start, {"code": session.participant.code}).url
        sample = self.samples[number]
        for block, answers in zip((1, 2), sample.retest_answers - STORED_OFFSET, strict=True):
            bot.get(page)
            pace.wait(pace.shs())
            given = {key: str(code) for key, code in zip(ITEM_KEYS, answers, strict=True)}
            bot.post(page, {"step": f"block{block}_shs", **given})
