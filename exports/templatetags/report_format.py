"""Number formats of the study report, localised by the active language through
scoring.numbers (the one helper every report uses); a dash for a missing figure."""

from django import template

from scoring import numbers

register = template.Library()
MISSING = numbers.MISSING


@register.filter
def fixed(value, digits=2):
    return numbers.fixed(value, int(digits))


@register.filter
def signed(value, digits=2):
    return numbers.fixed(value, int(digits), signed=True)


@register.filter
def pct(value, digits=1):
    return numbers.percent(value, int(digits))


@register.filter
def pvalue(value):
    """For a table cell: "< 0.001" or "0.051"."""
    return numbers.p_value(value)


@register.filter
def pstatement(value):
    """For a sentence: "p < 0.001" or "p = 0.051"."""
    return numbers.p_statement(value)


@register.filter
def interval(values, digits=2):
    return numbers.interval(values, int(digits))


@register.filter
def get(mapping, key):
    return mapping.get(key) if mapping else None
