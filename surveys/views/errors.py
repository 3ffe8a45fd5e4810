"""The 400 and 404 pages: say why a request was not read, and that nothing was
stored; or that there is no page here, the same words whether it does not exist
or may not be seen.

A form larger than DATA_UPLOAD_MAX_MEMORY_SIZE (a transcript pasted whole,
say) or holding a NUL character is refused by Django or by
`surveys.middleware.RefuseNulCharactersMiddleware` before any view runs, so
no view can show its own error: Django's bare "Bad Request (400)" would
leave the experimenter guessing. The refusal can come before the session and
locale middleware ran: the page names no user and takes the language from
the browser, or, for a remote participant, from their session (a French
participant on a German phone reads French; docs/design/protocol.md §4.11).
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.shortcuts import render
from django.utils import translation

from surveys.models import StudySession
from surveys.participant_access import participant_token
from surveys.transcript_import import MAX_CHARACTERS


def _language(request) -> str:
    token = participant_token(request)
    sessions = StudySession.objects.filter(token=token, remote=True)
    chosen = sessions.values_list("language", flat=True).first() if token else None
    return chosen or translation.get_language_from_request(request)


def bad_request(request, exception=None):
    translation.activate(_language(request))
    too_big = isinstance(exception, RequestDataTooBig)
    context = {
        "too_big": too_big,
        "megabytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 1_000_000,
        "characters": MAX_CHARACTERS,
    }
    # 413 Content Too Large says the same to anything but a person.
    return render(request, "400.html", context, status=413 if too_big else 400)


def page_not_found(request, exception=None):
    """Django's bare 404 page is English and has no landmarks: a participant who
    mistyped a retest link would read neither their language nor a way on."""
    translation.activate(_language(request))
    return render(request, "404.html", status=404)
