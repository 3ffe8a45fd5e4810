"""How every page and report of the platform writes a number: the calculator,
the `shs_analyze` HTML report and the study report all format through here
(in templates through the filters of `scoring/templatetags/shs_numbers.py`).

The convention, one for all of them:

- Numbers are localised by the active language through Django's number
  formatting: "0.25" in English, "0,25" in German and French. Leading zeros
  are kept, also for p, r and alpha (APA drops them): the reports are read in
  three languages, and ",001" reads as a typo to a German or French reader.
- p is written with three decimals: "0.023" in a table cell, "p = 0.023" in a
  sentence; below 0.001 "< 0.001" and "p < 0.001".
- A "+" is written only where the sign is itself the finding: scores and means
  on the bipolar −1..+1 scale, consistency c, differences, correlations r
  ("+0.25", "-0.25"). Zero carries no sign ("0.00"), and a value that rounds
  to zero is zero, never "-0.00". Reliability coefficients (alpha, omega,
  Spearman-Brown), SDs, test statistics and shares are written unsigned.
- A figure that is missing is a dash, "—".
"""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.formats import get_format, number_format

MISSING = "—"
# The smallest p written as a number; anything below reads "< 0.001".
SMALLEST_P = 0.001

# A figure as the reports hold it; a template gives "" for one it lacks.
Figure = float | str | None


def _number(value: Figure) -> float | None:
    """`value` as a number, None when the figure is missing."""
    return None if value is None or value == "" else float(value)


def fixed(value: Figure, digits: int = 2) -> str:
    """`value` with `digits` decimals in the active language: "0.87", "-0.25"."""
    number = _number(value)
    if number is None:
        return MISSING
    number = round(number, int(digits))
    if number == 0:
        number = 0.0  # a value that rounds to zero is zero, never "-0.00"
    return number_format(number, int(digits), use_l10n=True)


def signed(value: Figure, digits: int = 2) -> str:
    """A figure whose sign is the finding: "+0.25", "-0.25", and "0.00" for zero."""
    text = fixed(value, digits)
    number = _number(value)
    if number is None or round(number, int(digits)) <= 0:
        return text
    return f"+{text}"


def p_value(value: Figure) -> str:
    """For a table cell: "< 0.001" or "0.051"."""
    number = _number(value)
    if number is None:
        return MISSING
    return f"< {fixed(SMALLEST_P, 3)}" if number < SMALLEST_P else fixed(number, 3)


def p_statement(value: Figure) -> str:
    """For a sentence: "p < 0.001" or "p = 0.051"."""
    if _number(value) is None:
        return f"p {MISSING}"
    text = p_value(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def percent(value: Figure, digits: int = 1) -> str:
    """A share (0..1) as a percentage: "12.5 %"."""
    number = _number(value)
    if number is None:
        return MISSING
    return f"{fixed(100 * number, digits)} %"


def confidence(value: Figure) -> str:
    """A confidence level (0..1) as the percentage an interval is named by:
    "95 %", "99.9 %", with only the decimals the level has."""
    number = _number(value)
    if number is None:
        return MISSING
    share = round(100 * number, 2)
    digits = next(d for d in (0, 1, 2) if abs(share - round(share, d)) < 1e-9)
    return f"{fixed(share, digits)} %"


def interval(values: Sequence[Figure] | None, digits: int = 2) -> str:
    """ "[0.81, 0.86]"; "[0,81; 0,86]" where the comma is the decimal separator."""
    if not values:
        return MISSING
    separator = "; " if get_format("DECIMAL_SEPARATOR") == "," else ", "
    return f"[{fixed(values[0], digits)}{separator}{fixed(values[1], digits)}]"
