"""The input of the validation analyses (docs/design.md §14.3): evaluations with
who gave them, in which language, for which system, with the companion scales
given beside them and the retest pairs. Built from a study by
`validation.dataset` and from an answer file by `shs_analyze`; read by
`scoring.cfa`, `scoring.invariance`, `scoring.validity`, `scoring.retest` and
`scoring.nested`. Plain arrays, nothing of Django."""

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class RetestPairs:
    """The same participant's SHS for the same system, first and again.

    Row i of `first` and of `second` are one pair; `days` is the time
    between the two submissions.
    """

    first: np.ndarray  # (m, 10) answers -2..+2, as stored
    second: np.ndarray  # (m, 10) answers -2..+2
    participant: np.ndarray  # (m,)
    days: np.ndarray  # (m,) float

    @property
    def n(self) -> int:
        return len(self.first)


@dataclass(frozen=True)
class ValidationData:
    """Complete SHS evaluations, one row each (a participant gives two)."""

    # (n, 10) answers as stored, -2..+2 (scoring.instruments.shs.SCALE_VALUES), complete rows only
    answers: np.ndarray
    participant: np.ndarray  # (n,) export-local participant labels
    system: np.ndarray  # (n,) system labels
    language: np.ndarray  # (n,) language codes
    # The coordinator's demographic grouping for invariance (e.g. "age_band"),
    # with each evaluation's group label; None when none was picked.
    group_name: str = ""
    group: np.ndarray | None = None
    # Companion scale key ("sus", "scs", "trust") -> (n, k) item codes in the
    # scale's own order, NaN where the evaluation has no answer to that scale.
    companion_items: dict[str, np.ndarray] = field(default_factory=dict)
    # The same key -> (n,) the scale's published score, NaN where not given.
    companion_scores: dict[str, np.ndarray] = field(default_factory=dict)
    retest: RetestPairs | None = None

    @property
    def n(self) -> int:
        return len(self.answers)
