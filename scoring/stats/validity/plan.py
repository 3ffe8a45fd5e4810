"""The pre-registered settings of the criterion-validity study (paper section 8.2;
docs/design/criterion.md §13.1) as the analysis takes them: thresholds, alpha, sidedness,
the primary analysis and the bootstrap's seed and resamples.

Its own module because every part of the analysis reads it: `criterion`
calls `hypotheses` and `residuals`, and all three take a `Plan`.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Plan:
    """The pre-registered settings (criterion.models.PreRegistration)."""

    h1_threshold: float = 0.40
    falsification_threshold: float = 0.20
    alpha: float = 0.05
    sidedness: str = "one_sided"  # or "two_sided"
    primary: str = "clustered"  # or "unclustered"
    seed: int = 20240
    resamples: int = 2000
    planned_n: int = 200
    # H3's predictor: the Deceptiveness dimension, or the annotated presentation
    # measure (scoring/stats/validity/residuals.py).
    h3_predictor: str = "DP"

    def __post_init__(self) -> None:
        if self.sidedness not in ("one_sided", "two_sided"):
            raise ValueError(f"sidedness must be one_sided or two_sided, not {self.sidedness!r}")
        if self.primary not in ("clustered", "unclustered"):
            raise ValueError(f"primary must be clustered or unclustered, not {self.primary!r}")
        if self.h3_predictor not in ("DP", "presentation"):
            raise ValueError(f"h3_predictor must be DP or presentation, not {self.h3_predictor!r}")
        if not 0.0 < self.alpha < 0.5:
            raise ValueError(f"alpha must lie in (0, 0.5), not {self.alpha}")
        for name in ("h1_threshold", "falsification_threshold"):
            if not -1.0 < getattr(self, name) < 1.0:
                raise ValueError(f"{name} must lie in (-1, 1)")
        if self.resamples < 2 or self.planned_n < 1 or self.seed < 0:
            raise ValueError("resamples must be >= 2, planned_n >= 1 and seed >= 0")
