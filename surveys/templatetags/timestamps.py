"""One way to show a moment on staff pages: the locale's short date and a
24-hour time that always has its minutes.

English SHORT_DATETIME_FORMAT writes "9 p.m." on the hour and "9:03 p.m."
otherwise, so the times of a session's steps looked unlike each other, and a
sentence ending on one read "p.m.."."""

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.formats import date_format

register = template.Library()


@register.filter
def stamp(value: datetime | None) -> str:
    """`value` as "12/03/2026 21:00" in English, "03.12.2026 21:00" in German."""
    if not value:
        return ""
    if timezone.is_aware(value):
        value = timezone.localtime(value)
    return f"{date_format(value, 'SHORT_DATE_FORMAT')} {date_format(value, 'H:i')}"
