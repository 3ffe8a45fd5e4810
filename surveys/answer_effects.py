"""Who rated and what was rated: a participant effect and a system effect on the
simulated answers of surveys/answer_model.py (docs/design/command-line.md §9.6).

The calibrated model draws each evaluation's five dimension factors on its
own, so a participant's two evaluations would correlate about 0 and every
system would be rated alike: clustered and unclustered figures could not
differ, and chance differences between systems would read as real. Here an
evaluation's factors (before they are correlated by Table 6) are

    F = sqrt(share) * P + sqrt(1 - share) * E,   then shifted by the system's offset,

P the participant's (the same in both their evaluations), E the evaluation's
own, both independent standard normal. Within a system F keeps the
calibrated distribution, so the paper's means, SDs, Table 6, paired-item
correlations and alpha still hold; only the clustering is new.

`share` is solved so that the *overall SHS* of a participant's two
evaluations correlates `participant_icc` (rounding to the five answers and
the items' own noise attenuate it: .35 needs a share of about .38), and the
offset so that the first and the last system's mean overall SHS lie
`system_difference` within-system SDs apart (Cohen's d); systems between
them are spread evenly. Both solved by bisection on fixed draws, so they
depend on the targets, never on the seed.

The defaults, .35 and 0.2, are our choice: the paper reports no intraclass
correlation and deliberately compares no systems (sections 6.2 and 11; its
analyses pool them). .35 is a moderate participant effect, in the range
repeated ratings by one person of different stimuli usually show, and the
validation programme's latent model uses a similar share (.30 latent,
validation/simulation/parameters.py); 0.2 SD is a small difference, enough
for a clustered analysis to have a system effect to find and small enough
not to dominate the pooled figures.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from scoring.instruments.shs import DIMENSION_KEYS, ITEM_KEYS
from scoring.scores.engine import score_array
from surveys.answer_model import CALIBRATED, LatentParameters, _rounded

DEFAULT_PARTICIPANT_ICC = 0.35
DEFAULT_SYSTEM_DIFFERENCE = 0.2
_CALIBRATION_PAIRS = 40_000
_BISECTION_STEPS = 30


class AnswerEffectsError(ValueError):
    """Effects the model cannot give; nothing was simulated."""


@dataclass(frozen=True)
class AnswerEffects:
    participant_icc: float = DEFAULT_PARTICIPANT_ICC
    system_difference: float = DEFAULT_SYSTEM_DIFFERENCE

    def __post_init__(self) -> None:
        if not 0 <= self.participant_icc < 1:
            raise AnswerEffectsError("--participant-icc must lie in [0, 1)")
        if not -2 <= self.system_difference <= 2:
            raise AnswerEffectsError("--system-difference must lie between -2 and 2 SD")


DEFAULT_EFFECTS = AnswerEffects()
NO_EFFECTS = AnswerEffects(participant_icc=0.0, system_difference=0.0)


def _overall(answers: np.ndarray) -> np.ndarray:
    return np.asarray(score_array(answers).shs)


@functools.lru_cache(maxsize=4)
def _fixed_draws(model: LatentParameters) -> tuple[np.ndarray, ...]:
    """Participant factors, two evaluations' own factors and item noise (seed 0)."""
    rng = np.random.default_rng(0)
    n, k, items = _CALIBRATION_PAIRS, len(DIMENSION_KEYS), len(ITEM_KEYS)
    return (
        rng.standard_normal((n, k)),
        rng.standard_normal((2, n, k)),
        rng.standard_normal((2, n, items)),
    )


def _pair_r(model: LatentParameters, share: float) -> float:
    participant, own, noise = _fixed_draws(model)
    first, second = (
        _overall(
            _rounded(model, np.sqrt(share) * participant + np.sqrt(1 - share) * own[i], noise[i])
        )
        for i in (0, 1)
    )
    return float(np.corrcoef(first, second)[0, 1])


def _bisect(function, target: float, high: float) -> float:
    """The x in [0, high] where the increasing `function` reaches `target`."""
    low = 0.0
    for _ in range(_BISECTION_STEPS):
        middle = (low + high) / 2
        low, high = (middle, high) if function(middle) < target else (low, middle)
    return (low + high) / 2


@functools.lru_cache(maxsize=32)
def factor_share(model: LatentParameters, participant_icc: float) -> float:
    """The participant's share of each factor that gives the overall SHS this ICC."""
    if participant_icc == 0:
        return 0.0
    reachable = _pair_r(model, 1.0)
    if participant_icc >= reachable:
        raise AnswerEffectsError(
            f"--participant-icc {participant_icc} is beyond what the answer model can show "
            f"(at most {reachable:.2f}: the items' own noise stays)"
        )
    return _bisect(lambda share: _pair_r(model, share), participant_icc, 1.0)


def _cohens_d(model: LatentParameters, shift: float) -> float:
    _, own, noise = _fixed_draws(model)
    low = _overall(_rounded(model, own[0], noise[0], -shift / 2))
    high = _overall(_rounded(model, own[1], noise[1], shift / 2))
    pooled = np.sqrt((low.var(ddof=1) + high.var(ddof=1)) / 2)
    return float((high.mean() - low.mean()) / pooled)


@functools.lru_cache(maxsize=32)
def factor_shift(model: LatentParameters, system_difference: float) -> float:
    """The shift of the five factors between the first and the last system that
    puts their mean overall SHS `system_difference` SDs apart."""
    if system_difference == 0:
        return 0.0
    size = _bisect(lambda shift: _cohens_d(model, shift), abs(system_difference), 4.0)
    return float(np.copysign(size, system_difference))


def system_offsets(count: int, shift: float) -> np.ndarray:
    """Each of `count` systems' factor shift, in the study's order: evenly from
    -shift/2 (the first) to +shift/2 (the last); one system has none."""
    if count < 2:
        return np.zeros(count)
    return np.linspace(-shift / 2, shift / 2, count)


class EffectDraws:
    """The answers of `participants` participants, drawn up front from `rng`;
    each pair is finished once its systems are known (`answers`)."""

    def __init__(
        self,
        rng: np.random.Generator,
        participants: int,
        *,
        effects: AnswerEffects = DEFAULT_EFFECTS,
        model: LatentParameters = CALIBRATED,
    ):
        self.model = model
        self.share = factor_share(model, effects.participant_icc)
        self.shift = factor_shift(model, effects.system_difference)
        count = 2 * participants
        # The evaluations' own draws first, in the order CALIBRATED.answers takes
        # them, so that with no effects the answers are the calibrated model's.
        own = rng.standard_normal((count, len(DIMENSION_KEYS)))
        noise = rng.standard_normal((count, len(ITEM_KEYS)))
        self.own = own.reshape(participants, 2, -1)
        self.noise = noise.reshape(participants, 2, -1)
        self.participant = rng.standard_normal((participants, len(DIMENSION_KEYS)))

    def answers(self, number: int, offsets: tuple[float, float] = (0.0, 0.0)) -> np.ndarray:
        """(2, 10) answers -2..+2 of participant `number`, whose two systems'
        factor offsets are `offsets` (block 1, block 2)."""
        factors = (
            np.sqrt(self.share) * self.participant[number]
            + np.sqrt(1 - self.share) * self.own[number]
        )
        return np.vstack(
            [
                _rounded(
                    self.model,
                    factors[block : block + 1],
                    self.noise[number, block : block + 1],
                    offsets[block],
                )
                for block in (0, 1)
            ]
        )
