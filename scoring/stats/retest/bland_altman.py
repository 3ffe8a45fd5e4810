"""Bland-Altman agreement of a score given twice (docs/design/validation-analysis.md §14.4).

`bland_altman(first, second)`: the differences second - first, their mean (the
bias: a drift of the whole sample between the two occasions), their SD, and
the limits of agreement bias -/+ z SD within which the stated share of one
participant's differences is expected to fall, each with its interval
(Bland & Altman 1986, section 5; 1999, section 4.1):
    SE(bias) = s / sqrt(n)
    SE(limit) = s sqrt(1/n + z^2 / (2 (n - 1)))     (about sqrt(3 s^2 / n) at 95 %)
both with Student's t on n - 1 degrees of freedom.

The plot of these figures is drawn by scoring/web/bland_altman_plot.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats.caveats import gettext_noop, reason
from scoring.stats.estimators import normal_quantile, t_quantile

# Two pairs give one degree of freedom: an F interval for the ICC and a t
# interval for the limits that span almost everything. Three is the least
# that says anything.
MIN_PAIRS = 3
METHOD = (
    "Bland-Altman: differences second - first; bias = their mean with a t interval; "
    "limits of agreement = bias -/+ z SD with the intervals of Bland & Altman "
    "(1986; 1999), SE = SD sqrt(1/n + z^2 / (2 (n - 1))), t on n - 1 df"
)
TOO_FEW = gettext_noop("needs at least {needed} retest pairs, got {n}")
NO_SPREAD = gettext_noop(
    "every difference is the same: the limits of agreement coincide with the bias"
)


def bland_altman(
    first: NDArray[Any], second: NDArray[Any], *, confidence: float = 0.95
) -> dict[str, Any]:
    """Bias, SD and limits of agreement of second - first, each with its interval."""
    first = np.asarray(first, dtype=np.float64)
    differences = np.asarray(second, dtype=np.float64) - first
    n = len(differences)
    figures: dict[str, Any] = {"method": METHOD, "n": n, "confidence": confidence, "reasons": []}
    if n < MIN_PAIRS:
        figures["reasons"].append(reason(TOO_FEW, needed=MIN_PAIRS, n=n))
        figures.update(estimable=False, bias=None, sd=None, bias_ci=None)
        figures.update(lower=None, upper=None, lower_ci=None, upper_ci=None)
        return figures
    bias = float(differences.mean())
    sd = float(differences.std(ddof=1))
    if sd == 0.0:
        figures["reasons"].append(reason(NO_SPREAD))
    tail = (1.0 - confidence) / 2.0
    z = normal_quantile(1.0 - tail)
    t = t_quantile(1.0 - tail, n - 1)
    bias_half = t * sd / math.sqrt(n)
    limit_half = t * sd * math.sqrt(1.0 / n + z * z / (2.0 * (n - 1)))
    lower, upper = bias - z * sd, bias + z * sd
    figures.update(
        estimable=True,
        bias=bias,
        sd=sd,
        z=z,
        bias_ci=[bias - bias_half, bias + bias_half],
        lower=lower,
        upper=upper,
        lower_ci=[lower - limit_half, lower + limit_half],
        upper_ci=[upper - limit_half, upper + limit_half],
    )
    return figures
