"""The filters through which templates write numbers: scoring.web.numbers, so a
page, the `shs_analyze` report and the study report write a figure alike."""

from collections.abc import Mapping, Sequence

from django import template

from scoring.web import numbers
from scoring.web.numbers import Figure

register = template.Library()


# A filter's argument comes as the template writes it: `x|fixed:3` or `x|fixed:"3"`.
@register.filter
def fixed(value: Figure, digits: int | str = 2) -> str:
    return numbers.fixed(value, int(digits))


@register.filter
def signed(value: Figure, digits: int | str = 2) -> str:
    return numbers.signed(value, int(digits))


@register.filter
def pct(value: Figure, digits: int | str = 1) -> str:
    return numbers.percent(value, int(digits))


@register.filter
def pvalue(value: Figure) -> str:
    return numbers.p_value(value)


@register.filter
def pstatement(value: Figure) -> str:
    return numbers.p_statement(value)


@register.filter
def confidence(value: Figure) -> str:
    return numbers.confidence(value)


@register.filter
def interval(values: Sequence[Figure] | None, digits: int | str = 2) -> str:
    return numbers.interval(values, int(digits))


@register.filter
def get(mapping: Mapping[object, object] | None, key: object) -> object:
    """`mapping[key]`, or nothing: a template cannot look up a variable key."""
    return mapping.get(key) if mapping else None
