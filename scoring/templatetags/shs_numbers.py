"""The filters through which templates write numbers: scoring.numbers, so a
page, the `shs_analyze` report and the study report write a figure alike."""

from django import template

from scoring import numbers

register = template.Library()


@register.filter
def fixed(value, digits=2):
    return numbers.fixed(value, int(digits))


@register.filter
def signed(value, digits=2):
    return numbers.signed(value, int(digits))


@register.filter
def pct(value, digits=1):
    return numbers.percent(value, int(digits))


@register.filter
def pvalue(value):
    return numbers.p_value(value)


@register.filter
def pstatement(value):
    return numbers.p_statement(value)


@register.filter
def interval(values, digits=2):
    return numbers.interval(values, int(digits))


@register.filter
def get(mapping, key):
    """`mapping[key]`, or nothing: a template cannot look up a variable key."""
    return mapping.get(key) if mapping else None
