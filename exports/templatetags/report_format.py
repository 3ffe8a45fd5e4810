"""Number formats of the study report: a decimal point in every language, so the
page shows the same digits as the exported files; a dash for a missing figure."""

from django import template

register = template.Library()
MISSING = "—"


@register.filter
def fixed(value, digits=2):
    if value is None or value == "":
        return MISSING
    return f"{float(value):.{int(digits)}f}"


@register.filter
def signed(value, digits=2):
    if value is None or value == "":
        return MISSING
    number = float(value)
    # A value that rounds to zero is "+0.00" like scoring.report.fixed, never "-0.00".
    if round(number, int(digits)) == 0:
        number = 0.0
    return f"{number:+.{int(digits)}f}"


@register.filter
def pct(value, digits=1):
    if value is None or value == "":
        return MISSING
    return f"{100 * float(value):.{int(digits)}f}%"


@register.filter
def pvalue(value):
    if value is None or value == "":
        return MISSING
    return "< .001" if float(value) < 0.001 else f"{float(value):.3f}"


@register.filter
def get(mapping, key):
    return mapping.get(key) if mapping else None
