"""A simulated validation study drawn from the latent model of `parameters`
(docs/design/validation-analysis.md §14.9): SHS answers, companion scales and a retest wave in
several languages, with every parameter known. Plain numpy, nothing of Django,
so the figures are checked without a database and `simulate_study --latent`
posts the same answers through the real protocol.

Everything a participant brings is drawn up front, in participant order, from
the seed alone: language, group, the participant's part of the latent levels,
each evaluation's own part and item errors, the retest's. Which systems a
participant rates is left open (`LatentStudy.sample` takes it), because on the
platform the allocation decides it when the session starts; a system's effect
is drawn from the seed and the system's label, so the answers are the same
whichever order the participants meet the systems in.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scoring.instruments.companions import COMPANION_SCALES
from scoring.instruments.shs import ITEM_KEYS
from scoring.stats.validation_data import RetestPairs, ValidationData
from validation.simulation.parameters import (
    DEFAULT,
    ITEM_FACTOR,
    ITEM_REVERSED,
    LATENT_KEYS,
    CompanionShape,
    LatentParameters,
    latent_correlations,
)

# The model's codes run 1..5; the SHS is stored, posted and analysed as -2..+2.
STORED_OFFSET = 3


@dataclass(frozen=True)
class LatentSample:
    """Evaluations in participant order (block 1, then block 2), with their latent
    levels and continuous responses kept beside the codes for checking."""

    params: LatentParameters
    participant: np.ndarray  # (n,) participant index
    block: np.ndarray  # (n,) 1 or 2
    system: np.ndarray  # (n,) system labels
    language: np.ndarray  # (n,)
    group_name: str
    group: np.ndarray | None  # (n,) or None
    latent: np.ndarray  # (n, 8) in LATENT_KEYS order
    shs_continuous: np.ndarray  # (n, 10) keyed continuous responses
    answers: np.ndarray  # (n, 10) codes 1-5 as given (negative items not reversed)
    companion_continuous: dict[str, np.ndarray]  # scale -> (n, k), keyed
    companion_items: dict[str, np.ndarray]  # scale -> (n, k) codes as given
    retest_rows: np.ndarray  # (m,) rows of the evaluations given again
    retest_latent: np.ndarray  # (m, 8)
    retest_continuous: np.ndarray  # (m, 10)
    retest_answers: np.ndarray  # (m, 10) codes 1-5 as given
    retest_days: np.ndarray  # (m,) days from the evaluation to its retest

    @property
    def n(self) -> int:
        return len(self.answers)


def _system_seed(seed: int, label: str) -> list[int]:
    return [seed, 16, 1, zlib.crc32(label.encode("utf-8"))]


class LatentStudy:
    """The draws of `n_participants` participants; `sample` gives their answers
    for the systems they rate."""

    def __init__(
        self,
        n_participants: int,
        *,
        seed: int,
        languages: Sequence[str] = ("en", "de", "fr"),
        scales: Sequence[str] = ("sus", "scs", "trust"),
        retest_share: float = 0.0,
        retest_after_days: int = 14,
        groups: Sequence[str] = (),
        group_name: str = "",
        params: LatentParameters = DEFAULT,
    ):
        unknown = [key for key in scales if key not in params.companions]
        if unknown or not languages or n_participants < 1 or not 0 <= retest_share <= 1:
            raise ValueError(
                f"need participants >= 1, a language, a retest share in [0, 1] and known "
                f"scales (unknown: {unknown})"
            )
        self.params, self.seed, self.scales = params, seed, tuple(scales)
        self.group_name, self.n_participants = group_name, n_participants
        rng = np.random.default_rng([seed, 16])
        count = n_participants
        # Spread evenly over the languages, in an order the seed shuffles.
        self.languages = rng.permutation(np.resize(np.array(languages), count))
        self.groups = rng.choice(np.array(groups), count) if groups else None
        self._cholesky = np.linalg.cholesky(latent_correlations(params))
        self._participant = self._latent(rng, (count,))
        self._own = self._latent(rng, (count, 2))
        self._retest_own = self._latent(rng, (count, 2))
        self._item_errors = rng.standard_normal((count, 2, len(ITEM_KEYS)))
        self._retest_errors = rng.standard_normal((count, 2, len(ITEM_KEYS)))
        self._companion_errors = {
            key: rng.standard_normal((count, 2, len(params.companions[key].reversed)))
            for key in self.scales
        }
        retested = rng.permutation(count)[: round(retest_share * count)]
        self.retested = np.zeros(count, dtype=bool)
        self.retested[retested] = True
        # Participants come back on the due day or up to a few days late.
        self.retest_days = retest_after_days + np.round(rng.exponential(1.5, count), 2)

    def _latent(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.standard_normal((*shape, len(LATENT_KEYS))) @ self._cholesky.T

    def system_effect(self, label: str) -> np.ndarray:
        rng = np.random.default_rng(_system_seed(self.seed, label))
        return self._latent(rng, ())

    def assign_systems(self, labels: Sequence[str]) -> np.ndarray:
        """(participants, 2) labels: two distinct systems each, at random."""
        if len(labels) < 2:
            raise ValueError("a participant rates two systems: give at least two labels")
        rng = np.random.default_rng([self.seed, 16, 2])
        first = rng.integers(len(labels), size=self.n_participants)
        second = (first + rng.integers(1, len(labels), size=self.n_participants)) % len(labels)
        return np.array(labels)[np.column_stack([first, second])]

    def _levels(self, rows: np.ndarray, systems: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(2 * rows, 8) latent levels of the evaluations and of their retests."""
        p = self.params
        effects = {label: self.system_effect(label) for label in np.unique(systems)}
        system_part = np.array([[effects[label] for label in pair] for pair in systems])
        stable = (
            np.sqrt(p.participant_icc) * self._participant[rows][:, None, :]
            + np.sqrt(p.system_share) * system_part
        )
        own_share = np.sqrt(1 - p.participant_icc - p.system_share)
        # The retest's own part correlates occasion_stability with the first's.
        stability = p.occasion_stability
        retest_own = (
            stability * self._own[rows] + np.sqrt(1 - stability**2) * self._retest_own[rows]
        )
        latent = stable + own_share * self._own[rows]
        retest = stable + own_share * retest_own
        return latent.reshape(-1, len(LATENT_KEYS)), retest.reshape(-1, len(LATENT_KEYS))

    def sample(self, systems: np.ndarray, participants: np.ndarray | None = None) -> LatentSample:
        """The evaluations of `participants` (default all) rating `systems`, one row
        of two labels per participant."""
        rows = np.arange(self.n_participants) if participants is None else np.asarray(participants)
        systems = np.asarray(systems).reshape(len(rows), 2)
        latent, retest_latent = self._levels(rows, systems)
        p = self.params
        language = np.repeat(self.languages[rows], 2)
        continuous, answers = _shs_answers(p, latent, self._item_errors[rows], language)
        retest_rows = np.flatnonzero(np.repeat(self.retested[rows], 2))
        retest_continuous, retest_answers = _shs_answers(
            p, retest_latent, self._retest_errors[rows], language
        )
        companions = {
            key: _companion_answers(p.companions[key], latent, self._companion_errors[key][rows])
            for key in self.scales
        }
        return LatentSample(
            params=p,
            participant=np.repeat(rows, 2),
            block=np.tile([1, 2], len(rows)),
            system=systems.reshape(-1),
            language=language,
            group_name=self.group_name,
            group=None if self.groups is None else np.repeat(self.groups[rows], 2),
            latent=latent,
            shs_continuous=continuous,
            answers=answers,
            companion_continuous={key: value[0] for key, value in companions.items()},
            companion_items={key: value[1] for key, value in companions.items()},
            retest_rows=retest_rows,
            retest_latent=retest_latent[retest_rows],
            retest_continuous=retest_continuous[retest_rows],
            retest_answers=retest_answers[retest_rows],
            retest_days=np.repeat(self.retest_days[rows], 2)[retest_rows],
        )


def _thresholds(params: LatentParameters, language: np.ndarray) -> np.ndarray:
    """(n, 10, 4) thresholds of each evaluation's items in its language."""
    base = np.array(params.item_thresholds, dtype=float)
    thresholds = np.broadcast_to(base, (len(language), *base.shape)).copy()
    for code, item, shift in params.language_threshold_shifts:
        thresholds[language == code, ITEM_KEYS.index(item)] += shift
    return thresholds


def _shs_answers(params, latent, errors, language) -> tuple[np.ndarray, np.ndarray]:
    loadings = np.array(params.item_loadings)
    errors = errors.reshape(-1, len(ITEM_KEYS))
    continuous = loadings * latent[:, ITEM_FACTOR] + np.sqrt(1 - loadings**2) * errors
    keyed = 1 + (continuous[:, :, None] > _thresholds(params, language)).sum(axis=2)
    # A negatively worded item is agreed with when perceived reliability is low.
    answers = np.where(ITEM_REVERSED, 6 - keyed, keyed)
    return continuous, answers


def _companion_answers(shape: CompanionShape, latent, errors) -> tuple[np.ndarray, np.ndarray]:
    factor = latent[:, LATENT_KEYS.index(shape.factor)][:, None]
    errors = errors.reshape(len(latent), -1)
    continuous = shape.loading * factor + np.sqrt(1 - shape.loading**2) * errors
    position = (continuous[:, :, None] > shape.thresholds).sum(axis=2)
    codes = np.array(shape.codes)
    given = np.where(np.array(shape.reversed), codes[::-1][position], codes[position])
    return continuous, given


def simulate_latent(
    n_participants: int,
    *,
    seed: int,
    systems: Sequence[str] = ("A", "B", "C", "D"),
    **options,
) -> LatentSample:
    """`n_participants` participants, two evaluations each, of two of `systems`
    chosen at random; `options` are LatentStudy's (languages, scales,
    retest_share, retest_after_days, groups, group_name, params)."""
    study = LatentStudy(n_participants, seed=seed, **options)
    return study.sample(study.assign_systems(systems))


def participant_label(index: int) -> str:
    return f"P{index + 1:05d}"


def to_validation_data(sample: LatentSample) -> ValidationData:
    """The sample as the validation analyses read it: SHS answers as stored (-2..+2),
    companion codes and scores by the registry's rules, the retest pairs."""
    labels = np.array([participant_label(index) for index in sample.participant])
    items = {key: value.astype(float) for key, value in sample.companion_items.items()}
    retest = None
    if len(sample.retest_rows):
        retest = RetestPairs(
            first=sample.answers[sample.retest_rows] - STORED_OFFSET,
            second=sample.retest_answers - STORED_OFFSET,
            participant=labels[sample.retest_rows],
            days=sample.retest_days.astype(float),
        )
    return ValidationData(
        answers=sample.answers - STORED_OFFSET,
        participant=labels,
        system=sample.system,
        language=sample.language,
        group_name=sample.group_name,
        group=sample.group,
        companion_items=items,
        companion_scores={
            key: COMPANION_SCALES[key].score_array(value) for key, value in items.items()
        },
        retest=retest,
    )
