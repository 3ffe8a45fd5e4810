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
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST

from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import CREDIT, ITEM_KEYS, LICENCE_URL
from surveys import protocol
from surveys.access import (
    COORDINATOR,
    SecondFactorRequired,
    get_session_for_user,
    get_study_for_user,
)
from surveys.assignment import AllocationImpossible
from surveys.models import ConsentText, PromptEntry, StudySession
from surveys.pilot import pilot_request
from surveys.protocol import ProtocolError, WrongStep
from surveys.session_forms import (
    ConsentForm,
    FinishInteractionForm,
    PromptForm,
    StartSessionForm,
    questionnaire_form,
    shs_items_context,
)
from surveys.steps import BLOCK_OF_STEP, SHS_STEPS, Step, hands_back_after
from surveys.views.participant_pages import (
    HANDBACK,
    handback_pending,
    participant_system_label,
    render_ended,
    render_handback,
    set_handback,
)


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
    # analyses; an experimenter's pilot starts as a request (issue 10).
    ask_coordinator = pilot and role != COORDINATOR and study.status != study.Status.DRAFT
    try:
        session = protocol.session_start(
            study=study,
            experimenter=request.user,
            language=form.cleaned_data["language"],
            is_pilot=pilot and not ask_coordinator,
        )
    except AllocationImpossible:
        messages.error(request, _("The study needs at least two active systems."))
        return redirect("surveys:study_detail", slug=study.slug)
    except ProtocolError as error:
        messages.error(request, str(error))
        return redirect("surveys:study_detail", slug=study.slug)
    if ask_coordinator:
        pilot_request(session_id=session.pk, requested_by=request.user)
    return redirect("surveys:session", token=session.token)


@login_required
def session_page(request, token):
    session = get_session_for_user(request, token)
    if session.is_ended:
        if request.method == "POST":
            error = _("This session has ended. Nothing was saved.")
            return render_ended(request, session, error=error, status=409)
        return render_ended(request, session)
    if request.method == "POST" and _posted_step(request) == HANDBACK:
        set_handback(request, session, pending=False)
        return redirect("surveys:session", token=session.token)
    handler = STEP_HANDLERS[session.step]
    if request.method == "POST":
        posted_step = _posted_step(request)
        try:
            if posted_step == session.step:
                response = handler(request, session, posted=True)
                if response.status_code == 302:
                    # A form accepted: whoever sent it holds the device. The next
                    # page waits for the hand-back when it is the experimenter's.
                    set_handback(request, session, pending=hands_back_after(posted_step))
                return response
            if posted_step in SHS_STEPS:
                # Possibly the same SHS submitted twice (double click, replay):
                # the service accepts an identical repeat and refuses anything else.
                protocol.shs_submit(
                    session_id=session.pk, step=posted_step, responses=_shs_responses(request)
                )
                return redirect("surveys:session", token=session.token)
            raise WrongStep(session, posted_step)
        except ProtocolError as error:
            return _refuse(request, session, error)
    _touch(session)
    if handback_pending(request, session):
        return render_handback(request, session)
    return handler(request, session, posted=False)


def _shs_responses(request) -> dict:
    return {key: request.POST[key] for key in ITEM_KEYS if key in request.POST}


def _touch(session):
    """A page view is activity too: the session is not abandoned while someone reads it."""
    StudySession.objects.filter(pk=session.pk).update(last_activity_at=timezone.now())


def _posted_step(request) -> str:
    return request.POST.get("step", "")


def _refuse(request, session, error):
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


def _render(request, session, template, status=200, **extra):
    # The target comes from the study, loaded with the session, not from the
    # step record: the record was given the same value on entry, and the
    # monitor judges overruns by the study's target too.
    target = session.study.target_minutes(session.step)
    participant_mode = session.participant_holds_device
    context = {
        "session": session,
        "study": session.study,
        "participant_mode": participant_mode,
        **extra,
    }
    if not participant_mode:
        # The countdown and overrun warning are for the experimenter only.
        context.update(target_minutes=target, target_seconds=(target or 0) * 60)
    elif session.study.participant_time_hint:
        context.update(time_hint_minutes=target)
    if participant_mode:
        # Participant pages speak the participant's language, whatever the UI language.
        with translation.override(session.language):
            response = render(request, template, context, status=status)
            response["Content-Language"] = session.language
            return response
    return render(request, template, context, status=status)


# -- steps ---------------------------------------------------------------------------


def consent_step(request, session, *, posted, error=None, status=200):
    text = ConsentText.current(session.study_id, session.language)
    # Lazy: translated when the page renders, in the participant's language.
    statement = text.consent_text if text else gettext_lazy("I agree to take part in this study.")
    form = ConsentForm(
        request.POST if posted else None,
        language=session.language,
        consent_statement=statement,
        shown_text=text.fingerprint if text else "",
        fluency_languages=session.study.eligibility_languages,
    )
    if posted and form.is_valid():
        protocol.consent_submit(
            session_id=session.pk,
            eligibility=form.eligibility(),
            consented=form.cleaned_data["consent"],
            shown_text=form.cleaned_data["shown_text"],
        )
        return redirect("surveys:session", token=session.token)
    return _render(
        request,
        session,
        "surveys/session/consent.html",
        # A valid form has redirected or been refused: posted here means invalid.
        status=400 if posted else status,
        form=form,
        consent_text=text,
        error=error,
    )


def interaction_step(request, session, *, posted, error=None, status=200):
    finish_form = FinishInteractionForm(request.POST if posted else None)
    if posted and finish_form.is_valid():
        protocol.interaction_finish(
            session_id=session.pk,
            step=session.step,
            override_reason=finish_form.cleaned_data["override_reason"],
        )
        return redirect("surveys:session", token=session.token)
    block = BLOCK_OF_STEP[session.step]
    prompts = list(
        PromptEntry.objects.filter(interaction__session=session, interaction__block=block)
    )
    counts = protocol.prompt_counts(prompt.category for prompt in prompts)
    return _render(
        request,
        session,
        "surveys/session/interaction.html",
        status=status,
        # Not "block": inside {% block %} tags Django reserves that name.
        block_number=block,
        system=session.system_for_block(block),
        participant_label=participant_system_label(session, block),
        prompts=prompts,
        counts=counts,
        minimum=protocol.minimum_prompts(session.study),
        missing=protocol.missing_prompts(session.study, counts),
        prompt_form=PromptForm(),
        finish_form=finish_form,
        error=error,
    )


def shs_step(request, session, *, posted, error=None, status=200):
    problems = []
    if posted:
        problems = protocol.shs_submit(
            session_id=session.pk, step=session.step, responses=_shs_responses(request)
        )
        if not problems:
            return redirect("surveys:session", token=session.token)
        status = 400
    evaluation = protocol.evaluation_for_display(session)
    block = BLOCK_OF_STEP[session.step]
    answers = evaluation.answers
    return _render(
        request,
        session,
        "surveys/session/shs.html",
        status=status,
        system_label=participant_system_label(session, block),
        items=shs_items_context(session.language, answers, problems),
        answered=sum(answer is not None for answer in answers.values()),
        item_count=len(ITEM_KEYS),
        problems=problems,
        shs_credit=CREDIT.get(session.language, CREDIT["en"]),
        licence_url=LICENCE_URL,
        error=error,
    )


def _questionnaire_step(
    request, session, *, posted, questionnaire, template, submit, error=None, status=200
):
    form = questionnaire_form(
        questionnaire, session.language, data=request.POST if posted else None
    )
    if posted:
        if form.is_valid():
            return submit(form.cleaned_data) or redirect("surveys:session", token=session.token)
        status = 400
    return _render(request, session, template, status=status, form=form, error=error)


def feedback_step(request, session, *, posted, error=None, status=200):
    def submit(answers):
        protocol.feedback_submit(session_id=session.pk, experimenter=request.user, answers=answers)
        # The last step: the experimenter goes on with the study, not to the
        # participant's closing page.
        messages.success(
            request,
            _("Session of %(code)s complete.") % {"code": session.participant.code},
        )
        return redirect("surveys:study_detail", slug=session.study.slug)

    return _questionnaire_step(
        request,
        session,
        posted=posted,
        questionnaire=FEEDBACK,
        template="surveys/session/feedback.html",
        submit=submit,
        error=error,
        status=status,
    )


def demographics_step(request, session, *, posted, error=None, status=200):
    def submit(answers):
        protocol.demographics_submit(session_id=session.pk, answers=answers)

    return _questionnaire_step(
        request,
        session,
        posted=posted,
        questionnaire=DEMOGRAPHICS,
        template="surveys/session/demographics.html",
        submit=submit,
        error=error,
        status=status,
    )


STEP_HANDLERS = {
    Step.CONSENT: consent_step,
    Step.BLOCK1_INTERACTION: interaction_step,
    Step.BLOCK1_SHS: shs_step,
    Step.BLOCK2_INTERACTION: interaction_step,
    Step.BLOCK2_SHS: shs_step,
    Step.FEEDBACK: feedback_step,
    Step.DEMOGRAPHICS: demographics_step,
}


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
        protocol.prompt_add(session_id=session.pk, step=_posted_step(request), **form.cleaned_data)
    except ProtocolError as error:
        return _refuse(request, session, error)
    return redirect("surveys:session", token=session.token)


@login_required
@require_POST
def prompt_remove_view(request, token, pk):
    session = get_session_for_user(request, token, light=True)
    try:
        protocol.prompt_remove(session_id=session.pk, step=_posted_step(request), prompt_id=pk)
    except ProtocolError as error:
        return _refuse(request, session, error)
    return redirect("surveys:session", token=session.token)


@login_required
@require_POST
def shs_answer_view(request, token):
    """Autosave of one SHS answer (used by the page's script as each answer is given)."""
    try:
        session = get_session_for_user(request, token, light=True)
    except SecondFactorRequired as error:
        # The script cannot follow a redirect to the TOTP setup: say it was not saved.
        return JsonResponse({"saved": False, "error": str(error)}, status=403)
    item, value = request.POST.get("item", ""), request.POST.get("value")
    try:
        saved = protocol.shs_answer_save(
            session_id=session.pk,
            step=_posted_step(request),
            item=item,
            value=value,
            sequence=request.POST.get("sequence", ""),
        )
    except WrongStep as error:
        return JsonResponse({"saved": False, "error": str(error)}, status=409)
    except ProtocolError as error:
        return JsonResponse({"saved": False, "error": str(error)}, status=400)
    # Not saved: a later answer to the item arrived first and is kept.
    return JsonResponse({"saved": saved, "superseded": not saved, "item": item})


@login_required
def withdraw_view(request, token):
    """The participant withdraws at any step; a confirmation page first."""
    session = get_session_for_user(request, token)
    if session.is_ended:
        return redirect("surveys:session", token=session.token)
    if request.method == "POST":
        try:
            protocol.session_withdraw(session_id=session.pk)
        except ProtocolError as error:
            return _refuse(request, session, error)
        return redirect("surveys:session", token=session.token)
    with translation.override(session.language):
        return render(
            request,
            "surveys/session/withdraw.html",
            {"session": session, "study": session.study, "participant_mode": True},
        )
