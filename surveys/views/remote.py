"""The public link of a remote study (docs/design/remote.md §11): start a session in
the participant's language, or resume one on this device (cookie) or on
another (participant code). No staff account is involved; the pages show
nothing of the platform beyond the study's title.
"""

from django.conf import settings
from django.db import IntegrityError, transaction
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from surveys.assignment import AllocationImpossible, QuotaFull
from surveys.client_limits import limit_give_back, over_limit
from surveys.models import PanelEntry, PersonalLink, Study, StudySession
from surveys.models.remote_fields import panel_id_or_none
from surveys.participant_access import participant_token, set_participant_cookie
from surveys.protocol.curation import participant_code_as_given
from surveys.protocol.flow import session_start
from surveys.protocol.state import ProtocolError
from surveys.quotas import quota_state
from surveys.session_forms import RemoteStartForm, ResumeForm
from surveys.steps import ENDED, Step
from surveys.views.participant_pages import completion_url


def take(request, code):
    return _take(request, code, link_token=None)


def take_personal(request, code, token):
    """A single-use personal link (docs/design/remote.md §11.4): starts at most one session."""
    return _take(request, code, link_token=token)


def _take(request, code, *, link_token):
    study = get_object_or_404(Study, public_code=code, mode=Study.Mode.REMOTE)
    own = _own_session_token(request, study)
    if own:
        # This device took part already: back to where it stopped (or its end page).
        return redirect("surveys:session", token=own)
    link = PersonalLink.find(study, link_token) if link_token is not None else None
    if link_token is not None and link is None:
        raise Http404
    posted = request.method == "POST" and study.status == Study.Status.ACTIVE
    if posted and request.POST.get("action") == "resume":
        return _resume(request, study)
    panel_id = _panel_id(request, study)
    if panel_id is _BAD_PANEL_ID:
        error = _("The link you followed is damaged. Please open it again from the panel.")
        return _page(request, study, error=error, can_start=False, status=400)
    if panel_id:
        # Panel ids are no secrets (panels show them to researchers, some are
        # short or sequential): each lookup counts as a participant code does.
        if _codes_over_limit(request):
            return _too_many(request, study)
        if entry := _panel_entry(study, panel_id):
            return _panel_return(request, study, entry)
    if link is not None and link.used_at:
        # Used: the participant code still resumes its session, on any device.
        return _page(request, study, link_used=True, status=410)
    if posted:
        return _start(request, study, link, panel_id)
    return _page(request, study, panel_id=panel_id)


# -- panel ids (docs/design/remote.md §11.6) -------------------------------------------

_BAD_PANEL_ID = object()


def _panel_id(request, study):
    """The panel id the link carries (GET) or the start form carried on (POST)."""
    if not study.panel_parameter:
        return None
    given = (
        request.POST.get("panel_id")
        if request.method == "POST"
        else request.GET.get(study.panel_parameter)
    )
    if not given:
        return None  # opened without one (a test by the team): started as usual
    return panel_id_or_none(given) or _BAD_PANEL_ID


def _panel_entry(study, panel_id) -> PanelEntry | None:
    return PanelEntry.objects.filter(study=study, panel_id=panel_id).first()


def _panel_return(request, study, entry):
    """A panel id seen before never starts a second session, and never opens one.

    The id shows a completed session's completion code again; a running
    session resumes only with this device's cookie or the participant code,
    so the page says where to find it, in the participant's language.
    """
    session = (
        StudySession.objects.filter(pk=entry.session_id)
        .only("step", "language", "completion_code", "remote", "study")
        .first()
    )
    if session is None or (session.step in ENDED and session.step != Step.COMPLETE):
        return _page(request, study, panel_done=True, status=409)
    session.study = study
    with translation.override(session.language):
        if session.step == Step.COMPLETE:
            done = {"completion_code": session.completion_code, "url": completion_url(session)}
            return _page(request, study, completed=done)
        return _page(request, study, running_elsewhere=True, status=409)


def _own_session_token(request, study) -> str | None:
    token = participant_token(request)
    if not token:
        return None
    sessions = StudySession.objects.filter(token=token, study=study, remote=True)
    return sessions.values_list("token", flat=True).first()


def _page(
    request,
    study,
    *,
    start_form=None,
    resume_form=None,
    error=None,
    link_used=False,
    panel_id=None,
    panel_done=False,
    completed=None,
    running_elsewhere=False,
    can_start=True,
    status=200,
):
    quota = quota_state(study)
    return render(
        request,
        "surveys/remote/take.html",
        {
            "study": study,
            "open": study.status == Study.Status.ACTIVE,
            "start_form": start_form or RemoteStartForm(study=study),
            "resume_form": resume_form or ResumeForm(),
            "error": error,
            "link_used": link_used,
            "panel_id": panel_id,
            "panel_done": panel_done,
            "completed": completed,
            "running_elsewhere": running_elsewhere,
            "can_start": can_start,
            "full": quota is not None and not quota.is_open,
        },
        status=status,
    )


def _too_many(request, study):
    return render(request, "surveys/remote/too_many.html", {"study": study}, status=429)


def _start(request, study, link=None, panel_id=None):
    form = RemoteStartForm(request.POST, study=study)
    if not form.is_valid():
        return _page(request, study, start_form=form, panel_id=panel_id, status=400)
    limit = settings.REMOTE_STARTS_PER_WINDOW
    if over_limit(request, "remote-start", limit=limit, window_seconds=_window()):
        return _too_many(request, study)
    try:
        with transaction.atomic():
            # The link first: a second start with it waits on the link's row
            # and then finds it used, before it allocates anything or meets a
            # full quota.
            if link is not None and not _link_claimed(link):
                raise _LinkUsed
            session = session_start(
                study=study, experimenter=None, language=form.cleaned_data["language"], remote=True
            )
            if link is not None:
                PersonalLink.objects.filter(pk=link.pk).update(session=session)
            if panel_id:
                PanelEntry.objects.create(study=study, panel_id=panel_id, session=session)
    except _LinkUsed:
        # Rendered outside the atomic block: its transaction is gone, and the
        # page's queries (the quota) would fail inside it.
        return _page(request, study, link_used=True, status=410)
    except IntegrityError:
        if not panel_id:
            raise
        # The same panel id started a session at the same moment: that one counts.
        return _panel_return(request, study, _panel_entry(study, panel_id))
    except QuotaFull:
        return _page(request, study, status=409)
    except (ProtocolError, AllocationImpossible):
        # A study that lost its systems or texts since activation: nobody can start.
        error = _("The study cannot be started at the moment. Please try again later.")
        return _page(request, study, error=error, status=503)
    if panel_id:
        # A new id: the start limit counts this request, the code limit need not.
        limit_give_back(request, _CODE_LIMIT)
    response = redirect("surveys:session", token=session.token)
    set_participant_cookie(response, session)
    return response


class _LinkUsed(Exception):
    """Another start used the personal link first."""


def _link_claimed(link) -> bool:
    """Mark the link used; False if another request used it first.

    One UPDATE on the row's unused state: of two starts with the same link at
    once, the second waits for the first's transaction and then finds the link
    used. The session is set on the link once it exists, in the same transaction.
    """
    unused = PersonalLink.objects.filter(pk=link.pk, used_at__isnull=True)
    return bool(unused.update(used_at=timezone.now()))


def _resume(request, study):
    form = ResumeForm(request.POST)
    if not form.is_valid():
        return _page(request, study, resume_form=form, status=400)
    # Counted before the lookup, so that guesses arriving together cannot pass
    # the limit; a right code is given back below. Past the limit even a right
    # one waits: a guesser learns nothing from the answers once stopped.
    if _codes_over_limit(request):
        return _too_many(request, study)
    code = participant_code_as_given(form.cleaned_data["code"])
    session = (
        StudySession.objects.filter(study=study, remote=True, participant__code=code)
        .exclude(step__in=ENDED)
        .first()
    )
    if session is None:
        form.add_error("code", _("No running session of this study has this code."))
        return _page(request, study, resume_form=form, status=400)
    limit_give_back(request, _CODE_LIMIT)  # only wrong codes count
    response = redirect("surveys:session", token=session.token)
    set_participant_cookie(response, session)
    return response


def _window() -> int:
    return settings.REMOTE_LIMIT_WINDOW_SECONDS


# Participant codes and panel ids share one count: both are guessed the same way.
_CODE_LIMIT = "remote-code"


def _codes_over_limit(request) -> bool:
    limit = settings.REMOTE_CODE_ATTEMPTS_PER_WINDOW
    return over_limit(request, _CODE_LIMIT, limit=limit, window_seconds=_window())
