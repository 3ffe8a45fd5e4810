"""What the participant sees beyond the step forms: the hand-back page, the
ended pages, and the system names as shown to them. All in the participant's
language, none with staff navigation or a way into the study."""

from django.conf import settings
from django.shortcuts import render
from django.utils import translation
from django.utils.translation import pgettext_lazy

from surveys.models.remote_fields import completion_url_with
from surveys.participant_access import HANDBACK_COOKIE, HANDBACK_SALT, handback_tokens
from surveys.retests import retest_notice
from surveys.steps import Step

# The step name the hand-back page posts: not a protocol step, it only lifts the page.
HANDBACK = "handback"


# -- handing the device back ----------------------------------------------------------
#
# Kept on the device, in a signed cookie, not in the study session: the page
# guards the hand-over of this device; the experimenter opening the session
# on another device has nothing to hand back. Not in the browser session
# either: a submission would then write the session row as well, one more
# statement inside every accepted form.

# The cookie is read in surveys.participant_access, where it decides the
# request's language as well: the hand-back page is the participant's.


def set_handback(request, response, session, *, pending: bool) -> None:
    """Mark (or clear) the hand-back of this device on the response."""
    tokens = handback_tokens(request)
    if pending == (session.token in tokens):
        return  # unchanged: no cookie is sent
    tokens ^= {session.token}
    if not tokens:
        response.delete_cookie(HANDBACK_COOKIE, samesite="Lax")
        return
    response.set_signed_cookie(
        HANDBACK_COOKIE,
        ",".join(sorted(tokens)),
        salt=HANDBACK_SALT,
        max_age=settings.SESSION_COOKIE_AGE,
        secure=settings.SESSION_COOKIE_SECURE,
        httponly=True,
        samesite="Lax",
    )


def handback_pending(request, session) -> bool:
    return session.token in handback_tokens(request)


def render_in_participant_language(request, session, template, context, status=200):
    """Render a page the participant reads: in their language, whatever the UI's."""
    with translation.override(session.language):
        response = render(request, template, context, status=status)
        response["Content-Language"] = session.language
        return response


def render_handback(request, session, error=None, status=200):
    context = {
        "session": session,
        "study": session.study,
        "participant_done": session.step == Step.FEEDBACK,
        "handback_step": HANDBACK,
        "error": error,
        **retest_notice(request, session),
    }
    return render_in_participant_language(
        request, session, "surveys/session/handback.html", context, status
    )


def render_ended(request, session, error=None, status=200):
    # A participant may be holding the device when the session ends
    # (screened out, withdrawn): every ended page speaks their language.
    context = {
        "session": session,
        "study": session.study,
        "error": error,
        "completion_url": completion_url(session),
        **retest_notice(request, session),
    }
    return render_in_participant_language(
        request, session, "surveys/session/ended.html", context, status
    )


def completion_url(session) -> str:
    """Where a completed remote session's end page sends the participant, with their code."""
    if not (session.remote and session.completion_code and session.study.completion_url):
        return ""
    return completion_url_with(session.study.completion_url, session.completion_code)


def participant_system_label(session, block: int) -> str:
    """The system's name as the participant sees it: blinded studies say "System A" or "B"."""
    if not session.study.blind_system_names:
        return session.system_for_block(block).name
    # Lazy: translated when the page renders, in the participant's language.
    if block == 1:
        return pgettext_lazy("blinded system name", "System A")
    return pgettext_lazy("blinded system name", "System B")
