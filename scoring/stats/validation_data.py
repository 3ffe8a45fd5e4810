"""The input of the validation analyses (docs/design/validation-analysis.md §14.3): evaluations with
who gave them, in which language, for which system, with the companion scales
given beside them and the retest pairs. Built from a study by
`validation.dataset` and from an answer file by `shs_analyze`; read by
`scoring.stats.factors.cfa`, `scoring.stats.factors.invariance`,
`scoring.stats.validity.convergent`, `scoring.stats.retest.stability` and
`scoring.stats.nested.clustered`. Plain arrays, nothing of Django."""

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class RetestPairs:
    """The same participant's SHS for the same system, first and again.

    Row i of `first` and of `second` are one pair; `days` is the time
    between the two submissions.
    """

    first: NDArray[np.integer[Any]]  # (m, 10) answers -2..+2, as stored
    second: NDArray[np.integer[Any]]  # (m, 10) answers -2..+2
    participant: NDArray[Any]  # (m,) labels: numbers in a study, text in a file
    days: NDArray[np.float64]  # (m,)

    @property
    def n(self) -> int:
        return len(self.first)


@dataclass(frozen=True)
class ValidationData:
    """Complete SHS evaluations, one row each (a participant gives two)."""

    # (n, 10) answers as stored, -2..+2 (scoring.instruments.shs.SCALE_VALUES), complete rows only
    answers: NDArray[np.integer[Any]]
    participant: NDArray[Any]  # (n,) export-local participant labels
    system: NDArray[Any]  # (n,) system labels
    language: NDArray[Any]  # (n,) language codes
    # The coordinator's demographic grouping for invariance (e.g. "age_band"),
    # with each evaluation's group label; None when none was picked.
    group_name: str = ""
    group: NDArray[Any] | None = None
    # Companion scale key ("sus", "scs", "trust") -> (n, k) item codes in the
    # scale's own order, NaN where the evaluation has no answer to that scale.
    companion_items: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    # The same key -> (n,) the scale's published score, NaN where not given.
    companion_scores: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    retest: RetestPairs | None = None

    @property
    def n(self) -> int:
        return len(self.answers)
