"""The session runner: one URL per session, always showing the session's current step.

The experimenter's device is handed to the participant for the consent, SHS
and demographics steps; those pages are in the participant's language and
show nothing but the form: no staff navigation, no countdown. When the
participant's form leads to an experimenter's step, a hand-back page stands
between the two until the experimenter continues. Every POST names the step
it was made for; the protocol services refuse it when the session is elsewhere.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from surveys.access import (
    COORDINATOR,
    SecondFactorRequired,
    get_session_for_user,
    get_study_for_user,
)
from surveys.assignment import AllocationImpossible, QuotaFull
from surveys.models import StudySession
from surveys.participant_access import get_session_for_request, staff_or_participant
from surveys.pilot import pilot_request
from surveys.protocol.curation import session_withdraw
from surveys.protocol.flow import session_start, shs_answer_save
from surveys.protocol.prompts import prompt_add, prompt_remove
from surveys.protocol.state import ProtocolError, WrongStep, activity_is_stale
from surveys.retests import forget_retest_link
from surveys.session_forms import PromptForm, StartSessionForm
from surveys.steps import SHS_STEPS, hands_back_after
from surveys.views.participant_pages import (
    HANDBACK,
    handback_pending,
    render_ended,
    render_handback,
    set_handback,
)
from surveys.views.session_steps import STEP_HANDLERS, posted_step, shs_step


@login_required
@require_POST
def session_start_view(request, slug):
    study, role = get_study_for_user(request, slug)
    form = StartSessionForm(request.POST, study=study)
    if not form.is_valid():
        messages.error(request, _("Choose one of the study's languages to start a session."))
        return redirect("surveys:study_detail", slug=study.slug)
    pilot = form.cleaned_data.get("is_pilot", False)
    # In a running study only a coordinator takes a session out of the
    # analyses; an experimenter's pilot starts as a request.
    ask_coordinator = pilot and role != COORDINATOR and study.status != study.Status.DRAFT
    try:
        session = session_start(
            study=study,
            experimenter=request.user,
            language=form.cleaned_data["language"],
            is_pilot=pilot and not ask_coordinator,
        )
    except QuotaFull:
        messages.error(request, _("Every system has reached the study's quota: it is full."))
        return redirect("surveys:study_detail", slug=study.slug)
    except AllocationImpossible:
        messages.error(request, _("The study needs at least two active systems."))
        return redirect("surveys:study_detail", slug=study.slug)
    except ProtocolError as error:
        messages.error(request, str(error))
        return redirect("surveys:study_detail", slug=study.slug)
    if ask_coordinator:
        pilot_request(session_id=session.pk, requested_by=request.user)
    return redirect("surveys:session", token=session.token)


@staff_or_participant
def session_page(request, token):
    session = get_session_for_request(request, token)
    if session.is_ended:
        if request.method == "POST":
            error = _("This session has ended. Nothing was saved.")
            return render_ended(request, session, error=error, status=409)
        return render_ended(request, session)
    if request.method == "POST":
        step = posted_step(request)
        if step == HANDBACK:
            response = redirect("surveys:session", token=session.token)
            set_handback(request, response, session, pending=False)
            forget_retest_link(response)
            return response
        try:
            response = _handler_of_posted(session, step)(request, session, posted=True)
        except ProtocolError as error:
            return refuse_posted(request, session, error)
        if response.status_code == 302 and step == session.step:
            # A form accepted: whoever sent it holds the device. The next
            # page waits for the hand-back when it is the experimenter's.
            set_handback(request, response, session, pending=_hands_back(session, step))
        return response
    _touch(session)
    if handback_pending(request, session):
        return render_handback(request, session)
    return STEP_HANDLERS[session.step](request, session, posted=False)


def _hands_back(session, step) -> bool:
    """Whether the accepted form of `step` ends the participant's turn with the device.

    Companion scales keep the participant on the SHS step after the SHS
    (docs/design/validation.md §14.1): only the form that left the step hands it back.
    """
    if not hands_back_after(step, remote=session.remote):
        return False
    if step in SHS_STEPS and session.study.companion_scales:
        return not StudySession.objects.filter(pk=session.pk, step=step).exists()
    return True


def _handler_of_posted(session, step):
    """The step page a form goes to: its own step's, or WrongStep.

    An SHS form goes to the SHS page whatever the session's step: only its
    service can tell a repeat of a submitted SHS from a stale form.
    """
    if step in SHS_STEPS:
        return shs_step
    if step != session.step:
        raise WrongStep(session, step)
    return STEP_HANDLERS[step]


def _touch(session):
    """A page view is activity too: the session is not abandoned while someone reads it."""
    if activity_is_stale(session):
        StudySession.objects.filter(pk=session.pk).update(last_activity_at=timezone.now())


def refuse_posted(request, session, error):
    """Show the current step again, with why the POST was refused (409 Conflict)."""
    session.refresh_from_db()
    if session.is_ended:
        return render_ended(request, session, error=str(error), status=409)
    if handback_pending(request, session):
        # A participant's stale form (a second click, the back button) must not
        # open the experimenter's page on the device they still hold.
        return render_handback(request, session, error=str(error), status=409)
    handler = STEP_HANDLERS[session.step]
    return handler(request, session, posted=False, error=str(error), status=409)


# -- actions beside the step form ----------------------------------------------------


@login_required
@require_POST
def prompt_add_view(request, token):
    session = get_session_for_user(request, token, light=True)
    form = PromptForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose the prompt's category."))
        return redirect("surveys:session", token=session.token)
    try:
        prompt_add(session_id=session.pk, step=posted_step(request), **form.cleaned_data)
    except ProtocolError as error:
        return refuse_posted(request, session, error)
    return redirect("surveys:session", token=session.token)


@login_required
@require_POST
def prompt_remove_view(request, token, pk):
    session = get_session_for_user(request, token, light=True)
    try:
        prompt_remove(session_id=session.pk, step=posted_step(request), prompt_id=pk)
    except ProtocolError as error:
        return refuse_posted(request, session, error)
    return redirect("surveys:session", token=session.token)


@staff_or_participant
@require_POST
def shs_answer_view(request, token):
    """Autosave of one SHS answer (used by the page's script as each answer is given).

    Ten per form: the access check reads the session locked, in the
    transaction of the save, so the row is read once.
    """
    item, value = request.POST.get("item", ""), request.POST.get("value")
    try:
        with transaction.atomic():
            session = get_session_for_request(request, token, for_update=True)
            saved = shs_answer_save(
                session_id=session.pk,
                step=posted_step(request),
                item=item,
                value=value,
                sequence=request.POST.get("sequence", ""),
                locked=session,
            )
    except SecondFactorRequired as error:
        # The script cannot follow a redirect to the TOTP setup: say it was not saved.
        return JsonResponse({"saved": False, "error": str(error)}, status=403)
    except WrongStep as error:
        return JsonResponse({"saved": False, "error": str(error)}, status=409)
    except ProtocolError as error:
        return JsonResponse({"saved": False, "error": str(error)}, status=400)
    # Not saved: a later answer to the item arrived first and is kept.
    return JsonResponse({"saved": saved, "superseded": not saved, "item": item})


@staff_or_participant
def withdraw_view(request, token):
    """The participant withdraws at any step; a confirmation page first."""
    session = get_session_for_request(request, token)
    if session.is_ended:
        return redirect("surveys:session", token=session.token)
    if request.method == "POST":
        try:
            # A participant on their own is no staff member: the row names no one.
            session_withdraw(session_id=session.pk, actor=request.user)
        except ProtocolError as error:
            return refuse_posted(request, session, error)
        return redirect("surveys:session", token=session.token)
    with translation.override(session.language):
        return render(
            request,
            "surveys/session/withdraw.html",
            {"session": session, "study": session.study, "participant_mode": True},
        )
