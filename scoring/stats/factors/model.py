"""The shape of a confirmatory factor model (docs/design/validation-analysis.md §14.5): which item
measures which factor, written as semopy model syntax for one group and as
`scoring.stats.factors.likelihood.Pattern`s for several groups with equality constraints.

Every item loads on one factor only; a factor's first item is its marker
(loading fixed to 1, the factor's variance free), as in semopy and lavaan,
so both programs and this one estimate the same parameters.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from scoring.stats.factors.likelihood import FIXED, Moments, Pattern


@dataclass(frozen=True)
class Layout:
    """Items in data-column order, each with its factor; factors in order of first item."""

    items: tuple[str, ...]
    factor_of: dict[str, str]

    @classmethod
    def of(cls, factor_of: dict[str, str]) -> Layout:
        return cls(tuple(factor_of), dict(factor_of))

    @property
    def factors(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.factor_of[item] for item in self.items))

    @property
    def moments_count(self) -> int:
        p = len(self.items)
        return p * (p + 1) // 2

    def indicators(self, factor: str) -> list[str]:
        return [item for item in self.items if self.factor_of[item] == factor]

    def semopy_syntax(self) -> str:
        return "\n".join(
            f"{factor} =~ {' + '.join(self.indicators(factor))}" for factor in self.factors
        )


class _Numbering:
    """Hands out parameter indices; a key asked for twice gets the same index."""

    def __init__(self) -> None:
        self.kinds: list[str] = []
        self.shared: dict[tuple[str, str], int] = {}

    def new(self, kind: str, key: tuple[str, str] | None = None) -> int:
        if key is not None and key in self.shared:
            return self.shared[key]
        self.kinds.append(kind)
        if key is not None:
            self.shared[key] = len(self.kinds) - 1
        return len(self.kinds) - 1


def _group_pattern(
    layout: Layout, numbering: _Numbering, group: int, steps: Collection[str]
) -> Pattern:
    """One group's pattern. `steps` says what is equal across groups:
    {"loadings"} for metric, {"loadings", "intercepts"} for scalar."""
    p, m = len(layout.items), len(layout.factors)
    lam = np.full((p, m), FIXED)
    lam_fixed = np.zeros((p, m))
    for k, factor in enumerate(layout.factors):
        marker, *others = layout.indicators(factor)
        lam_fixed[layout.items.index(marker), k] = 1.0
        for item in others:
            key = ("loading", item) if "loadings" in steps else None
            lam[layout.items.index(item), k] = numbering.new("loading", key)
    phi = np.full((m, m), FIXED)
    for k in range(m):
        for j in range(k + 1):
            phi[k, j] = phi[j, k] = numbering.new("variance" if j == k else "covariance")
    theta = np.array([numbering.new("residual") for _ in range(p)])
    if "intercepts" not in steps:
        return Pattern(lam, lam_fixed, phi, theta)
    nu = np.array([numbering.new("intercept", ("intercept", item)) for item in layout.items])
    # The first group is the reference: its factor means are 0, the others' free.
    kappa = np.array([FIXED if group == 0 else numbering.new("mean") for _ in range(m)])
    return Pattern(lam, lam_fixed, phi, theta, nu, kappa)


def patterns(
    layout: Layout, groups: int, steps: Sequence[str] = ()
) -> tuple[list[Pattern], list[str]]:
    """The patterns of all groups and the kind of every parameter."""
    numbering = _Numbering()
    built = [_group_pattern(layout, numbering, g, set(steps)) for g in range(groups)]
    return built, numbering.kinds


def start_values(
    built: list[Pattern], kinds: list[str], moments: list[Moments]
) -> NDArray[np.float64]:
    """Loadings 1, factor variances half the marker's variance, residual
    variances half the item's, intercepts the item means, factor means 0."""
    x = np.zeros(len(kinds))
    for pattern, group in zip(built, moments, strict=True):
        variances = np.diag(group.cov)
        x[pattern.theta] = variances / 2.0
        for k in range(len(pattern.phi)):
            marker = int(np.argmax(pattern.lam_fixed[:, k]))
            x[pattern.phi[k, k]] = variances[marker] / 2.0
        if pattern.nu is not None:
            x[pattern.nu] = group.mean
    x[np.array(kinds) == "loading"] = 1.0
    return x


def lower_bounds(kinds: list[str]) -> NDArray[np.float64]:
    """Variances may not go below 0: a solution that stops there is improper (a Heywood case)."""
    return np.array([0.0 if kind in ("variance", "residual") else -np.inf for kind in kinds])
