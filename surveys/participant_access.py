"""How a remote participant reaches their own session and nothing else
(docs/design/remote.md §11.2): a signed cookie naming the session, set when the
public link starts the session or when the participant code resumes it.

Staff reach sessions through their study membership (`surveys.access`);
these helpers add the participant's way beside it, for the session pages,
the SHS autosave, the chat and withdrawal, and for no other view.
"""

from __future__ import annotations

from datetime import timedelta
from functools import wraps
from inspect import iscoroutinefunction

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404
from django.utils import translation

from surveys.access import (
    get_session_for_user,
    lookup_for,
    session_lookups,
    shaped_session_lookup,
)
from surveys.models import StudySession
from surveys.steps import Step

COOKIE = "shs_participant"
# A salt of its own: a value signed for another purpose is no session cookie.
SALT = "surveys.participant-session"
# Long enough to come back the next day; the session's inactivity timeout
# ends it well before in any case.
MAX_AGE = timedelta(days=30)


def participant_token(request) -> str | None:
    """The session token the request's cookie names, if its signature holds."""
    return request.get_signed_cookie(COOKIE, default=None, salt=SALT, max_age=MAX_AGE)


def set_participant_cookie(response, session: StudySession) -> None:
    response.set_signed_cookie(
        COOKIE,
        session.token,
        salt=SALT,
        max_age=int(MAX_AGE.total_seconds()),
        httponly=True,
        samesite="Lax",
        secure=settings.SESSION_COOKIE_SECURE,
    )


def get_session_for_request(
    request, token: str, *, light: bool = False, for_update: bool = False
) -> StudySession:
    """The session for its remote participant (by cookie) or for staff, or 404.

    The cookie opens only the remote session it names: another token in the
    URL falls through to the staff check, which answers 404 to a participant.
    """
    if participant_token(request) != token:
        session = get_session_for_user(request, token, light=light, for_update=for_update)
        if _participant_reads(request, session):
            activate_participant_language(session)
        return session
    lookup = lookup_for(REMOTE_SESSION, light=light, for_update=for_update)
    session = lookup.one(token=token)
    if session is None:
        raise Http404
    session.member_role = None  # not a member: sees no staff part of the pages
    activate_participant_language(session)
    return session


# -- the participant's language (docs/design/protocol.md §4.11) ----------------------
#
# Activated here, where every request of a session page, fragment, autosave or
# chat finds its session, for the rest of the request: the step's texts, the
# protocol's refusals, the form errors, the JSON answers and the error pages
# are all made in it, whatever language the browser asks for. Rendering in
# the language alone would leave out every text made before the template.


def activate_participant_language(session: StudySession) -> None:
    """The session's language for the rest of the request (also for the
    retest pages, which find their session by the retest's link)."""
    translation.activate(session.language)


def _participant_reads(request, session: StudySession) -> bool:
    """Whether the staff's request is answered with a page the participant reads.

    On the lab's device: the participant's steps, the hand-back page that
    guards the device they still hold, the ended pages (they may hold it when
    the session ends) and the administrator feedback, shown with the
    experimenter beside them after the session. The experimenter's own steps
    (the interaction) stay in the experimenter's language.
    """
    return (
        session.participant_holds_device
        or session.is_ended
        or session.step == Step.FEEDBACK
        or session.token in handback_tokens(request)
    )


# -- handing the device back (surveys.views.participant_pages) ------------------------

HANDBACK_COOKIE = "shs_handback"
HANDBACK_SALT = "surveys.handback"


def handback_tokens(request) -> set[str]:
    """The sessions whose hand-back this device still waits for."""
    value = request.get_signed_cookie(HANDBACK_COOKIE, default="", salt=HANDBACK_SALT)
    return {token for token in value.split(",") if token}


def _remote_session(token, *, light=False, for_update=False):
    queryset = StudySession.objects.filter(token=token, remote=True)
    return shaped_session_lookup(queryset, light=light, for_update=for_update)


REMOTE_SESSION = session_lookups(_remote_session, token=str)


def staff_or_participant(view):
    """`login_required`, except that a participant's cookie lets the request on
    to the view, whose access check then decides (404 for another session)."""

    def allowed(request, user) -> bool:
        return user.is_authenticated or participant_token(request) is not None

    if iscoroutinefunction(view):

        @wraps(view)
        async def async_wrapper(request, *args, **kwargs):
            if allowed(request, await request.auser()):
                return await view(request, *args, **kwargs)
            return redirect_to_login(request.get_full_path())

        return async_wrapper

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if allowed(request, request.user):
            return view(request, *args, **kwargs)
        return redirect_to_login(request.get_full_path())

    return wrapper
