"""The retest pages (docs/design/validation.md §14.2): the participant's link
`/retest/<token>/`, and the same pages run by staff on the lab's device
after finding the retest by the participant's code. Before the due date the
page only says when to come back; then the SHS for block 1's system, for
block 2's, and a thank-you page. All in the session's language.
"""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_POST, require_safe

from scoring.instruments.shs import CREDIT, ITEM_KEYS, LICENCE_URL
from surveys.access import get_study_for_user
from surveys.client_limits import limit_give_back, over_limit
from surveys.models import Retest
from surveys.participant_access import activate_participant_language
from surveys.protocol.state import ProtocolError
from surveys.retest_display import retest_link_qr_svg, session_ago_in_words
from surveys.retest_steps import retest_by_code, retest_submit
from surveys.retests import (
    RETEST_BLOCKS,
    retest_by_token,
    retest_evaluation_for_display,
    retest_is_due,
    retest_of_study,
)
from surveys.session_forms import shs_fieldsets
from surveys.views.participant_pages import (
    participant_system_label,
    render_in_participant_language,
)

# -- the participant's link -------------------------------------------------------


def retest_page(request, token):
    """The retest by its link; wrong tokens are limited as wrong participant codes are."""
    retest = _retest_by_link(request, token)
    if retest is None:
        return render(request, "surveys/remote/too_many.html", {}, status=429)
    return _retest_response(request, retest, staff_study=None)


@require_safe
def retest_slip_page(request, token):
    """The printable slip of a retest link: the link, its QR code and the date.

    Reached by the link's own token, so it shows nothing its holder does not
    have already: no participant code, no session, nothing of the study but
    its title.
    """
    retest = _retest_by_link(request, token)
    if retest is None:
        return render(request, "surveys/remote/too_many.html", {}, status=429)
    link = request.build_absolute_uri(reverse("surveys:retest", args=[token]))
    with translation.override(retest.session.language):
        # segno's own markup: modules drawn as a path, the title escaped by segno.
        qr_svg = mark_safe(retest_link_qr_svg(link))
    page = {"retest": retest, "retest_link": link, "qr_svg": qr_svg, "status": 200}
    return _render(request, "surveys/retest/slip.html", page)


def _retest_by_link(request, token) -> Retest | None:
    """The link's retest; None when this client has guessed too often; 404 when unknown."""
    # Counted before the lookup, given back for a right token: of many
    # guesses arriving together, at most the limit are looked up.
    limit, window = settings.REMOTE_CODE_ATTEMPTS_PER_WINDOW, settings.REMOTE_LIMIT_WINDOW_SECONDS
    if over_limit(request, "retest-token", limit=limit, window_seconds=window):
        return None
    retest = retest_by_token(token)
    if retest is None:
        raise Http404
    limit_give_back(request, "retest-token")
    return retest


# -- staff, at the lab ------------------------------------------------------------


class RetestCodeForm(forms.Form):
    code = forms.CharField(label=gettext_lazy("Participant code"), max_length=40)


@login_required
@require_POST
def retest_start_view(request, slug):
    """Find the retest by the code the participant quotes and open it on this device."""
    study, _role = get_study_for_user(request, slug)
    form = RetestCodeForm(request.POST)
    retest = retest_by_code(study, form.cleaned_data["code"]) if form.is_valid() else None
    if retest is None:
        messages.error(request, _("No retest of this study is scheduled for this code."))
        return redirect("surveys:study_detail", slug=study.slug)
    return redirect("surveys:retest_staff", slug=study.slug, pk=retest.pk)


@login_required
def retest_staff_page(request, slug, pk):
    study, _role = get_study_for_user(request, slug)
    retest = retest_of_study(study, pk)
    if retest is None:
        raise Http404
    return _retest_response(request, retest, staff_study=study)


# -- the pages --------------------------------------------------------------------


def _retest_response(request, retest: Retest, *, staff_study):
    # The participant's page, on their device or the lab's: its refusals too.
    activate_participant_language(retest.session)
    page = {"retest": retest, "staff_study": staff_study, "error": None, "status": 200}
    if request.method == "POST":
        step = request.POST.get("step", "")
        responses = {key: request.POST[key] for key in ITEM_KEYS if key in request.POST}
        try:
            problems = retest_submit(retest_id=retest.pk, step=step, responses=responses)
        except ProtocolError as error:
            if not Retest.objects.filter(pk=retest.pk).exists():
                raise Http404 from None  # erased meanwhile: its link answers 404 now
            retest.refresh_from_db()
            page.update(error=str(error), status=409)
        else:
            if not problems:
                return redirect(request.path)
            page.update(problems=problems, posted=responses, status=400)
    if not retest_is_due(retest):
        return _render(request, "surveys/retest/not_due.html", page)
    if retest.step == Retest.Step.COMPLETE:
        return _render(request, "surveys/retest/done.html", page)
    return _shs_page(request, page)


def _shs_page(request, page: dict):
    retest = page["retest"]
    session = retest.session
    evaluation = retest_evaluation_for_display(retest)
    problems = page.get("problems", [])
    # A refused form shows the valid answers it carried again: nothing was stored.
    given = {key: _answer_or_none(page.get("posted", {}).get(key)) for key in ITEM_KEYS}
    answers = given if problems else evaluation.answers
    with translation.override(session.language):
        session_ago = session_ago_in_words(retest.created_at)
    page.update(
        session_ago=session_ago,
        step=retest.step,
        system_label=participant_system_label(session, RETEST_BLOCKS[retest.step]),
        shs_fieldsets=shs_fieldsets(session.language, answers, problems),
        answered=sum(answer is not None for answer in answers.values()),
        item_count=len(ITEM_KEYS),
        # Not merely unanswered: a value no radio button gives (tampered).
        invalid=any(str(problem.value or "").strip() for problem in problems),
        shs_credit=CREDIT.get(session.language, CREDIT["en"]),
        licence_url=LICENCE_URL,
    )
    return _render(request, "surveys/retest/shs.html", page)


def _answer_or_none(value) -> int | None:
    try:
        answer = int(value)
    except (TypeError, ValueError):
        return None
    return answer if str(answer) == str(value).strip() else None


def _render(request, template: str, page: dict):
    session = page["retest"].session
    context = {**page, "session": session, "study": session.study}
    status = context.pop("status")
    return render_in_participant_language(request, session, template, context, status)
