"""Reliability within groups of evaluations (docs/design/validation-analysis.md §14.7): alpha within
each system and each language, and the per-language reliability table.

Descriptive: within a language a participant's two evaluations are usually
both there, so the Feldt interval (which takes them as independent) is too
narrow; within a system each participant gives at most one evaluation.
Figures come from the same exact moments as scoring.stats.nested.clustered.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats import estimators
from scoring.stats.caveats import gettext_noop, sentence
from scoring.stats.reliability.analysis import alpha_from_products, feldt_interval

# What was computed, for the report's reader; English in the JSON, translated when shown.
ALPHA_METHOD = gettext_noop(
    "Cronbach's alpha of the ten keyed items with the Feldt (1965) interval, the "
    "evaluations taken as independent."
)
OMEGA_METHOD = gettext_noop(
    "McDonald's omega total from a one-factor model of the ten keyed items (McDonald 1999)."
)
SHS_METHOD = gettext_noop("Mean and sample standard deviation (n - 1) of the SHS.")
# Worded so that no noun agrees with the count: "1 evaluations" cannot happen.
GROUP_TOO_SMALL = gettext_noop("too few evaluations ({n}); a group needs {needed} here")
ALPHA_CONSTANT = gettext_noop("the total of the ten items has zero variance")
ITEMS_CONSTANT = gettext_noop("an item has zero variance in this group")
OMEGA_NOT_FINITE = gettext_noop("the one-factor fit gave no finite value")
SHS_CONSTANT = gettext_noop("SHS has zero variance in this group")


def _alpha(n: int, centred: NDArray[np.float64], confidence: float) -> dict[str, Any]:
    alpha = alpha_from_products(centred)
    if alpha is None:
        return {"estimate": None, "ci95": None, "reason": ALPHA_CONSTANT}
    k = centred.shape[0]
    return {"estimate": alpha, "ci95": feldt_interval(alpha, n, k, confidence), "reason": None}


def _omega(centred: NDArray[np.float64]) -> dict[str, Any]:
    variance = np.diag(centred)
    if (variance == 0).any():
        return {"estimate": None, "caveats": [], "reason": ITEMS_CONSTANT}
    scale = np.sqrt(variance)
    omega, caveats = estimators.omega_total(centred / np.outer(scale, scale))
    if not math.isfinite(omega):
        return {"estimate": None, "caveats": caveats, "reason": OMEGA_NOT_FINITE}
    return {"estimate": float(omega), "caveats": caveats, "reason": None}


def _shs(n: int, total: float, centred_total: float) -> dict[str, Any]:
    """Mean and SD of SHS = (sum of the keyed items) / 20, from the exact sums."""
    mean = total / (n * 20)
    if centred_total == 0:
        return {"mean": mean, "sd": 0.0, "reason": SHS_CONSTANT}
    return {"mean": mean, "sd": math.sqrt(centred_total / (n * (n - 1))) / 20, "reason": None}


def _reason(said: dict[str, Any]) -> dict[str, Any]:
    """A sentence as "reason" (English) with its "message" and "params" beside it."""
    return {"reason": said["text"], "message": said["message"], "params": said["params"]}


def group_labels(labels: NDArray[Any]) -> tuple[NDArray[np.str_], NDArray[np.intp]]:
    """The sorted distinct labels and each row's index into them."""
    return np.unique(np.asarray(labels, dtype=str), return_inverse=True)


def group_alphas(
    count: NDArray[np.float64],
    centred: NDArray[np.float64],
    keys: NDArray[np.str_],
    *,
    min_n: int,
    confidence: float,
) -> dict[str, Any]:
    """{"groups": {label: figure}, "too_small": [labels], "min_n", "method"}."""
    groups: dict[str, dict[str, Any]] = {}
    too_small: list[str] = []
    for key, n, products in zip(keys, count.astype(int), centred, strict=True):
        if n < min_n:
            too_small.append(str(key))
            said = sentence(GROUP_TOO_SMALL, n=int(n), needed=min_n)
            groups[str(key)] = {"n": int(n), "estimate": None, "ci95": None, **_reason(said)}
            continue
        groups[str(key)] = {"n": int(n), **_alpha(int(n), products, confidence)}
    return {"method": ALPHA_METHOD, "min_n": min_n, "too_small": too_small, "groups": groups}


def language_table(
    count: NDArray[np.float64],
    sums: NDArray[np.float64],
    centred: NDArray[np.float64],
    participants: NDArray[np.int_],
    keys: NDArray[np.str_],
    *,
    min_n: int,
    confidence: float,
) -> dict[str, Any]:
    """Per language: n, participants, alpha with the Feldt interval, omega, SHS mean and SD."""
    rows: dict[str, dict[str, Any]] = {}
    too_small: list[str] = []
    for index, key in enumerate(keys):
        n = int(count[index])
        row: dict[str, Any] = {"n": n, "participants": int(participants[index])}
        if n < min_n:
            too_small.append(str(key))
            row.update(_reason(sentence(GROUP_TOO_SMALL, n=n, needed=min_n)))
            row.update(alpha=None, omega=None, shs=None)
        else:
            row["reason"] = None
            row["alpha"] = {"method": ALPHA_METHOD, **_alpha(n, centred[index], confidence)}
            row["omega"] = {"method": OMEGA_METHOD, **_omega(centred[index])}
            shs = _shs(n, float(sums[index].sum()), float(centred[index].sum()))
            row["shs"] = {"method": SHS_METHOD, **shs}
        rows[str(key)] = row
    return {"min_n": min_n, "too_small": too_small, "languages": rows}
