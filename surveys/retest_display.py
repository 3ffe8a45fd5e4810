"""What the retest pages show beyond the forms (docs/design/validation.md §14.2): how
long ago the participant's session was, in words, and the QR code of the
retest link for the slip a lab participant takes home.

Both are read by the participant, so both are made under their language
(the caller's `translation.override`).
"""

from __future__ import annotations

from datetime import datetime

import segno
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext

# Below two weeks a count of days reads naturally ("12 days ago"), below two
# months a count of weeks ("3 weeks ago"); beyond, months.
_DAYS_UP_TO = 13
_WEEKS_UP_TO = 59


def days_between(earlier: datetime, later: datetime) -> int:
    """Calendar days from one moment to another, in the site's time zone: a session
    at 23:00 is "yesterday" the next morning, as a participant counts."""
    return (timezone.localdate(later) - timezone.localdate(earlier)).days


def days_ago_in_words(days: int) -> str:
    """ "today", "yesterday", "12 days ago", "3 weeks ago", "2 months ago"."""
    if days <= 0:
        return pgettext("how long ago", "today")
    if days == 1:
        return pgettext("how long ago", "yesterday")
    if days <= _DAYS_UP_TO:
        return ngettext("%(count)d day ago", "%(count)d days ago", days) % {"count": days}
    if days <= _WEEKS_UP_TO:
        weeks = days // 7
        return ngettext("%(count)d week ago", "%(count)d weeks ago", weeks) % {"count": weeks}
    months = days // 30
    return ngettext("%(count)d month ago", "%(count)d months ago", months) % {"count": months}


def session_ago_in_words(session_ended_at: datetime, now: datetime | None = None) -> str:
    return days_ago_in_words(days_between(session_ended_at, now or timezone.now()))


# Error correction level M (15 %): a slip folded in a wallet still reads, and
# a 60-character link stays a small code (version 4, 33 modules a side).
QR_ERROR = "m"
# 5 px a module and the standard quiet zone of four modules.
QR_SCALE = 5
QR_BORDER = 4


def retest_link_qr(link: str) -> segno.QRCode:
    return segno.make(link, error=QR_ERROR, micro=False)


def retest_link_qr_svg(link: str) -> str:
    """The link's QR code as inline SVG, made here: no outside service sees the link."""
    return retest_link_qr(link).svg_inline(
        scale=QR_SCALE,
        border=QR_BORDER,
        dark="#000",
        light="#fff",
        title=_("QR code of your retest link"),
        svgclass="retest-qr",
    )
