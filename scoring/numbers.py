"""How every report of the platform writes a number: localised by the active
language through Django's number formatting ("0.25" in English, "0,25" in
German and French), a dash for a figure that is missing."""

from __future__ import annotations

from django.utils.formats import get_format, number_format

MISSING = "—"
# The smallest p written as a number; anything below reads "< 0.001".
SMALLEST_P = 0.001


def fixed(value: float | None, digits: int = 2, *, signed: bool = False) -> str:
    """`value` with `digits` decimals in the active language; "+" on request."""
    if value is None or value == "":
        return MISSING
    number = round(float(value), int(digits))
    if number == 0:
        number = 0.0  # a value that rounds to zero is zero, never "-0.00"
    text = number_format(number, int(digits), use_l10n=True)
    return f"+{text}" if signed and number >= 0 else text


def p_value(value: float | None) -> str:
    """For a table cell: "< 0.001" or "0.051"."""
    if value is None or value == "":
        return MISSING
    return f"< {fixed(SMALLEST_P, 3)}" if float(value) < SMALLEST_P else fixed(value, 3)


def p_statement(value: float | None) -> str:
    """For a sentence: "p < 0.001" or "p = 0.051"."""
    if value is None or value == "":
        return f"p {MISSING}"
    text = p_value(value)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def percent(value: float | None, digits: int = 1) -> str:
    """A share (0..1) as a percentage: "12.5 %"."""
    if value is None or value == "":
        return MISSING
    return f"{fixed(100 * float(value), digits)} %"


def interval(values: list[float] | None, digits: int = 2) -> str:
    """ "[0.81, 0.86]"; "[0,81; 0,86]" where the comma is the decimal separator."""
    if not values:
        return MISSING
    separator = "; " if get_format("DECIMAL_SEPARATOR") == "," else ", "
    return f"[{fixed(values[0], digits)}{separator}{fixed(values[1], digits)}]"
