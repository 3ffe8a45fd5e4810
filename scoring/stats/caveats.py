"""Why a figure of the analysis is missing, or what to keep in mind reading it.

Every reason is an English sentence with {placeholders}, marked for
translation but not translated here: the JSON of an analysis is English,
and a report translates the sentence into its own language.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

# Below this many evaluations alpha, correlations and normality tests carry a
# caution (paper section 9.2: ">= 30 representative users"); a study can set its own.
SMALL_SAMPLE_N = 30


def gettext_noop(message: str) -> str:
    """Marks `message` for makemessages. Django's own gettext_noop needs settings,
    and the analysis runs without them (the CLI, plain scripts)."""
    return message


def reason(message: str, **params: object) -> dict[str, Any]:
    """Why a figure is missing, as `Warnings` records it: the English sentence,
    its template and the values that fill it, for a report to translate."""
    return {"reason": message.format(**params), "message": message, "params": params}


def decimals(value: float) -> int:
    """How many decimals a rounded parameter is written with: as many as it kept
    (at most four), and at least two, so "0.85" and "85.31" read as figures."""
    text = repr(float(value))
    kept = len(text.split(".")[1]) if "." in text and "e" not in text else 0
    return max(2, min(kept, 4))


def written(key: str, value: object) -> str:
    """How an English sentence writes one of its parameters. The report's `explain`
    filter (validation/templatetags/validation_text.py) follows the same rules in
    the report's language: `p` as "p = 0.023" / "p < 0.001", a `delta…` with its
    sign, other floats with `decimals(value)`, a nested sentence (dict) as its text."""
    if isinstance(value, dict):
        # A nested sentence (a fit's own problem inside a warning): its English text.
        return str(value.get("problem") or value.get("text") or value.get("reason") or "")
    if isinstance(value, bool) or not isinstance(value, float):
        return str(value)
    if key == "p":
        return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"
    if key.startswith("delta"):
        return f"{value:+.3f}"
    return f"{value:.{decimals(value)}f}"


def sentence(message: str, **params: object) -> dict[str, Any]:
    """A user-facing sentence with its template and parameters: `text` for the JSON
    (English), `message` + `params` for a report to translate."""
    text = message.format(**{key: written(key, value) for key, value in params.items()})
    return {"text": text, "message": message, "params": params}


class Warnings:
    """Collects why a figure is null; every None in the result has an entry."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []

    def note(self, figure: str, message: str, **params: object) -> None:
        """A caveat about a figure that is still reported."""
        self.entries.append(
            {
                "figure": figure,
                "reason": message.format(**params),
                "message": message,
                "params": params,
            }
        )

    def null(self, figure: str, message: str, **params: object) -> None:
        """Why `figure` is null."""
        self.note(figure, message, **params)


TOO_FEW = gettext_noop("needs at least {needed} evaluations, got {n}")
TOO_FEW_PARTICIPANTS = gettext_noop("needs at least {needed} participants, got {n}")
# A list after the colon agrees with one item and with several ("{items} has" would not).
ZERO_VARIANCE = gettext_noop("zero variance: {items}")
NOT_FINITE = gettext_noop("not a finite number")
REST_CONSTANT = gettext_noop("the other nine items sum to a constant")
NO_EVALUATIONS = gettext_noop("no evaluations")
PAIRED_R_NULL = gettext_noop("the paired-item r of {dimension} is not available")
SB_NOT_INTERPRETABLE = gettext_noop(
    "{value} lies outside [-1, 1]: not interpretable as a reliability "
    "(the pair correlates below r = -1/3)"
)
SMALL_SAMPLE = gettext_noop(
    "based on {n} evaluations, fewer than the {threshold} a stable estimate needs: "
    "read with caution"
)


def small_sample_cautions(
    result: dict[str, Any], threshold: int, w: Warnings
) -> dict[str, int | bool]:
    """A caution on every small-sample figure that is reported at all."""
    n = result["n"]
    caution = n < threshold
    if caution:
        reported = {
            "cronbach_alpha": result["cronbach_alpha"]["alpha"] is not None,
            "dimension_correlations": any(
                pair["r"] is not None for pair in result["dimension_correlations"].values()
            ),
            "paired_item_r": any(r is not None for r in result["paired_item_r"].values()),
            "shapiro": result["shapiro"]["W"] is not None,
        }
        for figure, shown in reported.items():
            if shown:
                w.note(figure, SMALL_SAMPLE, n=n, threshold=threshold)
    return {"threshold": threshold, "caution": caution}


def json_ready(value: Any, path: str, w: Warnings) -> Any:
    """Plain Python types only; a non-finite number becomes null with a warning."""
    if isinstance(value, dict):
        return {
            key: json_ready(item, f"{path}.{key}".lstrip("."), w) for key, item in value.items()
        }
    if isinstance(value, list):
        return [json_ready(item, path, w) for item in value]
    if isinstance(value, (bool, str)) or value is None:
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    number = float(value)
    if not math.isfinite(number):
        w.null(path, NOT_FINITE)
        return None
    return number
