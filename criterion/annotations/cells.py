"""What a cell of an annotation file may hold (docs/design/criterion.md §13.2), the same
in either form of the file: a measure's name, and a value that is a finite
number written with a decimal point, a rate in 0..1 for the annotators' rates.
Each check returns the reason in words, "" when the cell is fine."""

from __future__ import annotations

import math
import re

from django.utils.translation import gettext as _

from criterion.models import DETECTOR_PREFIX, Annotation, Measure

# Measures whose values are rates; a detector's score is any finite number.
# Presentation is rated only where the pre-registration chose it for H3.
RATES = (
    Measure.FACTUAL_PRECISION.value,
    Measure.CITATION_SUPPORT.value,
    Measure.PRESENTATION.value,
)
_DETECTOR_NAME = re.compile(r"[a-z0-9_]+")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_NOT_FINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
# One limit for the sheet's pseudonym and the import that reads it back.
ANNOTATOR_LENGTH = Annotation._meta.get_field("annotator").max_length
_MEASURE_LENGTH: int = Annotation._meta.get_field("measure").max_length  # type: ignore[assignment]


def cell_text(cell) -> str:
    """A cell as the text a person sees in it (an XLSX 7.0 reads as 7)."""
    if cell is None:
        return ""
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    return str(cell).strip()


def measure_problem(measure: str) -> str:
    if measure in RATES:
        return ""
    name = measure.removeprefix(DETECTOR_PREFIX)
    if measure.startswith(DETECTOR_PREFIX) and _DETECTOR_NAME.fullmatch(name):
        if len(measure) <= _MEASURE_LENGTH:
            return ""
    return _(
        "measure “%(measure)s” is not one of factual_precision, citation_support, "
        "presentation or detector:<name> (name of a-z, 0-9 and _, at most %(n)d characters)"
    ) % {"measure": measure, "n": _MEASURE_LENGTH - len(DETECTOR_PREFIX)}


def cell_number(cell, measure: str) -> tuple[float, str]:
    if isinstance(cell, bool) or not isinstance(cell, (int, float, str)):
        return 0.0, _("value “%(value)s” is not a number") % {"value": cell_text(cell)}
    text = cell.strip() if isinstance(cell, str) else ""
    if isinstance(cell, str) and text.lower() in _NOT_FINITE:
        return 0.0, _("value “%(value)s” is not a finite number") % {"value": text}
    if isinstance(cell, str) and not _NUMBER.fullmatch(text):
        return 0.0, _("value “%(value)s” is not a number (write it with a decimal point)") % {
            "value": text
        }
    value = float(cell if not isinstance(cell, str) else text)
    if not math.isfinite(value):
        return 0.0, _("value “%(value)s” is not a finite number") % {"value": cell_text(cell)}
    if measure in RATES and not 0.0 <= value <= 1.0:
        return 0.0, _("value %(value)s of %(measure)s is outside 0..1") % {
            "value": cell_text(cell),
            "measure": measure,
        }
    return value, ""
