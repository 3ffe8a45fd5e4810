"""The page of each protocol step, as the session runner (`sessions.session_page`)
shows it and hands it the step's form.

Each handler takes the session at its step, shows the step's page or, when
`posted`, validates the form and passes it to the step's service in
`surveys.protocol`; an accepted form redirects back to the session URL.
"""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from scoring.instruments.common import translated
from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import CREDIT, ITEM_KEYS, LICENCE_URL
from surveys.models import ConsentText, PromptEntry
from surveys.protocol.companions import (
    companion_for_display,
    companion_submit,
    companions_finish,
)
from surveys.protocol.evaluations import evaluation_for_display
from surveys.protocol.flow import (
    consent_submit,
    demographics_submit,
    feedback_submit,
    interaction_finish,
    shs_submit,
)
from surveys.protocol.prompts import minimum_prompts, missing_prompts, prompt_counts
from surveys.retests import forget_retest_link, set_retest_link_cookie
from surveys.session_forms import (
    ConsentForm,
    FinishInteractionForm,
    PromptForm,
    companion_items,
    questionnaire_form,
    shs_fieldsets,
)
from surveys.steps import BLOCK_OF_STEP, Step, hands_back_after
from surveys.views.chat_panel import chat_context, naturalistic_context
from surveys.views.participant_pages import (
    participant_system_label,
    render_in_participant_language,
    set_handback,
)


def posted_step(request) -> str:
    """The step the posted form was made for (every form of the runner names it)."""
    return request.POST.get("step", "")


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
        return render_in_participant_language(request, session, template, context, status)
    return render(request, template, context, status=status)


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
        consent_submit(
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
        interaction_finish(
            session_id=session.pk,
            step=session.step,
            override_reason=finish_form.cleaned_data["override_reason"],
        )
        return redirect("surveys:session", token=session.token)
    block = BLOCK_OF_STEP[session.step]
    system = session.system_for_block(block)
    # A remote participant chats alone: their own page, worded for them.
    template = "interaction_remote" if session.remote else "interaction"
    page = {
        **_block_page(session, block, system),
        # A connected block's prompt log is tagged in its chat (docs/design/transcripts.md §10.3).
        **(chat_context(session, block) if system.is_connected else {}),
        "finish_form": finish_form,
        "error": error,
    }
    if session.study.is_naturalistic:
        # No categories: the block is held to messages and minutes (§11.5).
        page.update(naturalistic_context(session, block, page.get("turns")))
    else:
        page.update(_prompt_log_context(session, block))
    return _render(request, session, f"surveys/session/{template}.html", status=status, **page)


def _prompt_log_context(session, block: int) -> dict:
    prompts = list(
        PromptEntry.objects.filter(interaction__session=session, interaction__block=block)
    )
    counts = prompt_counts(prompt.category for prompt in prompts)
    return {
        "prompts": prompts,
        "counts": counts,
        "minimum": minimum_prompts(session.study),
        "missing": missing_prompts(session.study, counts),
        "prompt_form": PromptForm(),
    }


def _block_page(session, block: int, system) -> dict:
    return {
        # Not "block": inside {% block %} tags Django reserves that name.
        "block_number": block,
        "system": system,
        "participant_label": participant_system_label(session, block),
    }


def shs_step(request, session, *, posted, error=None, status=200):
    """The SHS of the current block; posted, the form of any block's SHS.

    The runner hands every SHS form here, whatever the session's step, and
    the service decides what it means (see `shs_submit`). Problems come back
    only for the session's current step, so the page shown is that step's.
    """
    if posted and "scale" in request.POST:
        return companion_step(request, session, posted=True)
    problems = []
    if posted:
        responses = {key: request.POST[key] for key in ITEM_KEYS if key in request.POST}
        problems = shs_submit(session_id=session.pk, step=posted_step(request), responses=responses)
        if not problems:
            return redirect("surveys:session", token=session.token)
        status = 400
    evaluation = evaluation_for_display(session)
    if evaluation.is_submitted:  # still on its step: the companion scales follow (§14.1)
        return companion_step(request, session, evaluation=evaluation, error=error, status=status)
    block = BLOCK_OF_STEP[session.step]
    answers = evaluation.answers
    return _render(
        request,
        session,
        "surveys/session/shs.html",
        status=status,
        system_label=participant_system_label(session, block),
        shs_fieldsets=shs_fieldsets(session.language, answers, problems),
        answered=sum(answer is not None for answer in answers.values()),
        item_count=len(ITEM_KEYS),
        problems=problems,
        shs_credit=CREDIT.get(session.language, CREDIT["en"]),
        licence_url=LICENCE_URL,
        error=error,
    )


def companion_step(request, session, *, posted=False, evaluation=None, error=None, status=200):
    """The companion scale due after the block's submitted SHS, one page per scale.

    Shows nothing of the SHS: its answers are in and can no longer change.
    """
    given, problems = {}, {}
    if posted:
        given = {key: value for key, value in request.POST.items() if key not in ("step", "scale")}
        problems = companion_submit(
            session_id=session.pk,
            step=posted_step(request),
            scale_key=request.POST["scale"],
            responses=given,
        )
        if not problems:
            return redirect("surveys:session", token=session.token)
        status = 400
    page = companion_for_display(session, evaluation or evaluation_for_display(session))
    if page.scale is None:  # every scale is in (one was dropped meanwhile): move on
        companions_finish(session_id=session.pk, step=session.step)
        handing_back = hands_back_after(session.step, remote=session.remote)
        response = redirect("surveys:session", token=session.token)
        set_handback(request, response, session, pending=handing_back)
        return response
    return _render(
        request,
        session,
        "surveys/session/companion.html",
        status=status,
        scale_key=page.scale.key,
        scale_label=page.scale.label_in(session.language),
        instructions=translated(page.scale.instructions, session.language),
        items=companion_items(page.scale, session.language, given, problems),
        problems=problems,
        position=page.position,
        count=page.count,
        attribution=page.scale.attribution(session.language),
        error=error,
    )


def _questionnaire_step(
    request, session, questionnaire, template, submit, *, posted, error=None, status=200
):
    form = questionnaire_form(
        questionnaire, session.language, data=request.POST if posted else None
    )
    if posted:
        if form.is_valid():
            return submit(form.cleaned_data) or redirect("surveys:session", token=session.token)
        status = 400
    return _render(request, session, template, status=status, form=form, error=error)


def feedback_step(request, session, **page):
    def submit(answers):
        feedback_submit(session_id=session.pk, experimenter=request.user, answers=answers)
        # The last step: the experimenter goes on with the study, not to the
        # participant's closing page, and reads there in their own language
        # (this page was in the participant's).
        with translation.override(translation.get_language_from_request(request)):
            messages.success(
                request,
                _("Session of %(code)s complete.") % {"code": session.participant.code},
            )
        response = redirect("surveys:study_detail", slug=session.study.slug)
        forget_retest_link(response)  # the participant has left the lab's device
        return response

    return _questionnaire_step(
        request, session, FEEDBACK, "surveys/session/feedback.html", submit, **page
    )


def demographics_step(request, session, **page):
    def submit(answers):
        retest_token = demographics_submit(session_id=session.pk, answers=answers)
        response = redirect("surveys:session", token=session.token)
        if retest_token:
            set_retest_link_cookie(response, session, retest_token)
        return response

    return _questionnaire_step(
        request, session, DEMOGRAPHICS, "surveys/session/demographics.html", submit, **page
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
