"""The 400 page: say why a request was not read, and that nothing was stored.

A form larger than DATA_UPLOAD_MAX_MEMORY_SIZE (a transcript pasted whole,
say) or holding a NUL character is refused by Django or by
`surveys.middleware.RefuseNulCharactersMiddleware` before any view runs, so
no view can show its own error: Django's bare "Bad Request (400)" would
leave the experimenter guessing. The refusal can come before the session and
locale middleware ran: the page names no user and takes the language from
the browser.
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.shortcuts import render
from django.utils import translation

from surveys.transcript_import import MAX_CHARACTERS


def bad_request(request, exception=None):
    translation.activate(translation.get_language_from_request(request))
    too_big = isinstance(exception, RequestDataTooBig)
    context = {
        "too_big": too_big,
        "megabytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 1_000_000,
        "characters": MAX_CHARACTERS,
    }
    # 413 Content Too Large says the same to anything but a person.
    return render(request, "400.html", context, status=413 if too_big else 400)
