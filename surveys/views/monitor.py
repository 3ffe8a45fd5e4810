"""Coordinator pages of a running study: the live monitor, a session's record,
pilot flags, audited corrections of submitted answers and deleting a
participant's data at their later request."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from surveys.access import get_study_for_user
from surveys.models import Evaluation, StudySession
from surveys.monitor import monitor_figures
from surveys.pilot import pilot_decide
from surveys.protocol.curation import (
    evaluation_correct,
    holds_erasable_data,
    participant_code_as_given,
    session_erase_on_request,
)
from surveys.protocol.state import ProtocolError
from surveys.session_forms import CorrectionForm, ErasureForm


@login_required
def monitor(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    template = (
        "surveys/monitor_live.html" if request.GET.get("fragment") else "surveys/monitor.html"
    )
    return render(request, template, {"study": study, "figures": monitor_figures(study)})


@login_required
def session_find(request, slug):
    """A session's record from the code its participant quotes (for a later
    request to delete their data): the monitor lists only recent sessions."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    code = participant_code_as_given(request.GET.get("code", ""))
    if code == "P-":
        messages.error(request, _("Type the participant's code to find their session."))
        return redirect("surveys:monitor", slug=study.slug)
    session = StudySession.objects.filter(study=study, participant__code=code).first()
    if session is None:
        messages.error(
            request,
            _(
                "No session of this study has the participant code %(code)s. "
                "A session whose data was deleted keeps no code."
            )
            % {"code": code},
        )
        return redirect("surveys:monitor", slug=study.slug)
    return redirect("surveys:session_record", slug=study.slug, token=session.token)


def _study_session(study, token):
    return get_object_or_404(
        StudySession.objects.select_related(
            "experimenter",
            "participant",
            "first_system",
            "second_system",
            "erasure__erased_by",
            "pilot_requested_by",
        ),
        study=study,
        token=token,
    )


@login_required
def session_record(request, slug, token):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    session = _study_session(study, token)
    evaluations = session.evaluations.select_related("system").prefetch_related(
        "corrections__corrected_by"
    )
    blocks = session.blocks.select_related("system").prefetch_related("prompts")
    return render(
        request,
        "surveys/session_record.html",
        {
            "study": study,
            "session": session,
            "records": session.step_records.all(),
            "blocks": blocks,
            "evaluations": evaluations,
            "correction_form": CorrectionForm(),
            "erasable": holds_erasable_data(session),
            "erasure_form": ErasureForm(),
        },
    )


@login_required
@require_POST
def session_pilot(request, slug, token):
    """Mark or unmark a pilot; also how a coordinator answers an experimenter's request."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    session = _study_session(study, token)
    is_pilot = request.POST.get("is_pilot") == "1"
    pilot_decide(session_id=session.pk, is_pilot=is_pilot, decided_by=request.user)
    messages.success(
        request,
        _("Session marked as pilot.") if is_pilot else _("Session no longer marked as pilot."),
    )
    return redirect(_safe_next(request, study))


def _safe_next(request, study):
    target = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        return target
    return reverse("surveys:monitor", args=[study.slug])


@login_required
@require_POST
def evaluation_correct_view(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    evaluation = get_object_or_404(
        Evaluation.objects.select_related("session"), pk=pk, session__study=study
    )
    form = CorrectionForm(request.POST)
    if form.is_valid():
        try:
            evaluation_correct(
                evaluation=evaluation,
                item=form.cleaned_data["item"],
                new_value=form.cleaned_data["new_value"],
                reason=form.cleaned_data["reason"],
                corrected_by=request.user,
            )
            messages.success(request, _("Answer corrected; the old value is kept in the audit."))
        except ProtocolError as error:
            messages.error(request, str(error))
    else:
        messages.error(request, _("A correction needs an item, a valid answer and a reason."))
    return redirect("surveys:session_record", slug=study.slug, token=evaluation.session.token)


@login_required
@require_POST
def session_erase(request, slug, token):
    """Delete a finished participant's data when they ask for it later."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    session = _study_session(study, token)
    form = ErasureForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Type the participant's code to confirm; nothing was deleted."))
    else:
        try:
            session_erase_on_request(
                session_id=session.pk,
                participant_code=form.cleaned_data["participant_code"],
                erased_by=request.user,
            )
            messages.success(
                request, _("The participant's data is deleted; the session counts as withdrawn.")
            )
        except ProtocolError as error:
            messages.error(request, str(error))
    return redirect("surveys:session_record", slug=study.slug, token=session.token)
