"""The information sheet and consent text of each language, its versions, and
the printable consent record of a session (coordinators of the study only)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from surveys.access import get_study_for_user
from surveys.consent import consent_history, consent_text_revise
from surveys.forms import ConsentTextForm
from surveys.models import ConsentRecord, ConsentText


@login_required
def consent_text_list(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    names = dict(settings.LANGUAGES)
    history = consent_history(study)
    rows = [(code, names[code], history.get(code, [])) for code in study.languages]
    return render(request, "surveys/consent_text_list.html", {"study": study, "rows": rows})


@login_required
def consent_text_edit(request, slug, language):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    if language not in study.languages:
        raise Http404
    current = ConsentText.current(study.pk, language)
    form = ConsentTextForm(request.POST or None, instance=current)
    if request.method == "POST" and form.is_valid():
        try:
            revision = consent_text_revise(
                study=study, language=language, actor=request.user, **form.cleaned_data
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, _revision_message(revision))
            return redirect("surveys:consent_text_list", slug=study.slug)
    return render(
        request,
        "surveys/consent_text_form.html",
        {
            "study": study,
            "form": form,
            "current": current,
            "consented": current is not None and current.records.exists(),
            "language": dict(settings.LANGUAGES)[language],
        },
    )


def _revision_message(revision) -> str:
    version = revision.text.version
    if not revision.changed:
        return _("Nothing changed; version %(version)s stays as it was.") % {"version": version}
    if revision.new_version:
        return _("Saved as version %(version)s.") % {"version": version}
    return _("Version %(version)s corrected (no one has consented to it yet).") % {
        "version": version
    }


@login_required
def consent_text_version(request, slug, pk):
    """One version as it was worded, read-only (older versions stay readable)."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    text = get_object_or_404(ConsentText, study=study, pk=pk)
    return render(
        request,
        "surveys/consent_text_version.html",
        {
            "study": study,
            "text": text,
            "language": dict(settings.LANGUAGES).get(text.language, text.language),
            "consents": text.records.count(),
        },
    )


@login_required
def consent_record(request, slug, token):
    """What one participant agreed to, to print or keep (HTML; the browser prints
    it to PDF). Only coordinators of the session's study reach it."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    record = get_object_or_404(
        ConsentRecord.objects.select_related("session__participant", "consent_text"),
        session__study=study,
        session__token=token,
    )
    context = {
        "study": study,
        "record": record,
        "session": record.session,
        "text": record.consent_text,
        "language": dict(settings.LANGUAGES).get(record.language, record.language),
    }
    response = render(request, "surveys/consent_record.html", context)
    if request.GET.get("download"):
        code = record.session.participant.code if record.session.participant else "session"
        response["Content-Disposition"] = f'attachment; filename="consent-{code}.html"'
    return response
