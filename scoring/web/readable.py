"""The analysis' caveats as a reader sees them: each figure by its name, each
reason as a sentence, in the active language. The JSON keeps its keys
(`additions.omega_total`, `item_total.q4`); no page or report shows them."""

from __future__ import annotations

from typing import Any

from django.utils.translation import get_language
from django.utils.translation import gettext as _

from scoring.instruments.shs import DIMENSIONS_BY_KEY, ITEMS
from scoring.web.numbers import fixed

_ITEM_NUMBERS = {item.key: item.number for item in ITEMS}


def _item(key: str) -> str:
    return f"Q{_ITEM_NUMBERS[key]}" if key in _ITEM_NUMBERS else key


def _dimension(key: str) -> str:
    dimension = DIMENSIONS_BY_KEY.get(key)
    if dimension is None:
        return key
    return f"{dimension.label_in((get_language() or 'en').split('-')[0])} ({key})"


def _whole_figures() -> dict[str, str]:
    return {
        "cronbach_alpha": _("Cronbach's alpha"),
        "dimension_correlations": _("Correlations between dimensions"),
        "paired_item_r": _("Paired-item correlations"),
        "response_chi2": _("Chi-square test of the answers"),
        "shapiro": _("Shapiro-Wilk test"),
        "skewness": _("Skewness"),
        "kurtosis": _("Kurtosis (excess)"),
        "overall": _("Mean SHS"),
        "overall.sd": _("SD of SHS"),
        "additions.omega_total": _("McDonald's omega total"),
    }


def figure_name(path: str) -> str:
    """ "item_total.q4" -> "Item-total r of Q4", in the active language."""
    whole = _whole_figures()
    if path in whole:
        return whole[path]
    head, _dot, key = path.rpartition(".")
    parts = {
        "item_total": lambda: _("Item-total r of %(item)s") % {"item": _item(key)},
        "alpha_if_deleted": lambda: _("Alpha if %(item)s deleted") % {"item": _item(key)},
        "item_agreement": lambda: _("Agreement with %(item)s") % {"item": _item(key)},
        "paired_item_r": lambda: (
            _("Paired-item r of %(dimension)s") % {"dimension": _dimension(key)}
        ),
        "paired_item_p": lambda: (
            _("p of the paired-item r of %(dimension)s") % {"dimension": _dimension(key)}
        ),
        "additions.spearman_brown": lambda: (
            _("Spearman-Brown of %(dimension)s") % {"dimension": _dimension(key)}
        ),
        "dimension_profile": lambda: _("Mean of %(dimension)s") % {"dimension": _dimension(key)},
        "consistent_share": lambda: (
            _("Consistent pairs of %(dimension)s") % {"dimension": _dimension(key)}
        ),
        "dimension_correlations": lambda: (
            _("Correlation %(first)s – %(second)s")
            % dict(zip(("first", "second"), key.split("-", 1), strict=True))
        ),
    }
    if head in parts:
        return parts[head]()
    if path.startswith("dimension_profile.") and path.endswith(".sd"):
        return _("SD of %(dimension)s") % {"dimension": _dimension(path.split(".")[1])}
    return path  # a figure this module does not know yet: better its key than nothing


def _param(value: object) -> str:
    if isinstance(value, float):
        return fixed(value)
    return " ".join(_item(part) for part in str(value).split(" "))


def reason(warning: dict[str, Any]) -> str:
    """The warning's reason, translated; an analysis stored before reasons carried
    their message (no `message` key) keeps its English reason."""
    message = warning.get("message")
    if not message:
        return str(warning["reason"])
    params = {key: _param(value) for key, value in warning.get("params", {}).items()}
    # The analysis joins two names with "and" ("q4 and q5"): the join word too
    # is the reader's language.
    conjunction = _("and")
    for key in ("items", "dimensions"):
        if key in params:
            params[key] = params[key].replace(" and ", f" {conjunction} ")
    return _(message).format(**params)


def readable_warnings(warnings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """[{"figure": name, "reason": sentence}] in the active language."""
    return [{"figure": figure_name(w["figure"]), "reason": reason(w)} for w in warnings]
