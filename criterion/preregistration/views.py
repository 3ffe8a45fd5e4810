"""The pre-registration pages (docs/design/criterion.md §13.1): every member of the study
reads it, its history and its fingerprints; coordinators edit it."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from criterion.models import PreRegistration
from criterion.preregistration.forms import PreRegistrationForm, state_token
from criterion.preregistration.services import (
    collection_began,
    current_version,
    fingerprint_matches,
    registration,
    save_version,
    saves_in_place,
)
from surveys.access import COORDINATOR, get_study_for_user


@require_GET
@login_required
def preregistration(request, slug):
    study, role = get_study_for_user(request, slug)
    history = registration(study)
    versions = list(reversed(history.versions))
    for version in versions:
        version.fingerprint_ok = fingerprint_matches(version)
    made_at = {version.version: version.created_at for version in versions}
    deviations = [{**found, "made_at": made_at[found["version"]]} for found in history.deviations()]
    return render(
        request,
        "criterion/preregistration.html",
        {
            "study": study,
            "history": history,
            "versions": versions,
            "deviations": deviations,
            "collecting": history.frozen is not None or collection_began(study),
            "is_coordinator": role == COORDINATOR,
        },
    )


@login_required
def preregistration_edit(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    current = current_version(study)
    in_place = saves_in_place(study, current)
    token = state_token(current, in_place)
    initial = {**(current.registered() if current else {}), "seen": token}
    form = PreRegistrationForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        if form.cleaned_data["seen"] != token:
            form = _shown_again(request.POST, token)
        else:
            try:
                saved = save_version(study, form.registered, request.user)
            except ValidationError as error:
                form.add_error(None, error)
            else:
                messages.success(request, _saved_message(current, saved))
                return redirect("criterion:preregistration", slug=study.slug)
    return render(
        request,
        "criterion/preregistration_form.html",
        {
            "study": study,
            "form": form,
            "current": current,
            "in_place": in_place,
            "next_version": current.version + 1 if current else 1,
            "collecting": (current is not None and not in_place) or collection_began(study),
        },
    )


def _shown_again(data, token: str) -> PreRegistrationForm:
    """The coordinator's values again, with what saving now does: the page they
    saw no longer said it (a session started, or someone else saved)."""
    data = data.copy()
    data["seen"] = token
    form = PreRegistrationForm(data)
    form.is_valid()
    form.add_error(
        None,
        _(
            "The pre-registration changed since you opened this page. Nothing was "
            "saved: read the note above the form and save again."
        ),
    )
    return form


def _saved_message(before: PreRegistration | None, saved: PreRegistration) -> str:
    number = {"version": saved.version}
    if before is not None and before.pk == saved.pk:
        if before.sha256 == saved.sha256:
            return _("Nothing changed; version %(version)s stays as it was.") % number
        return _("Version %(version)s corrected (data collection has not begun).") % number
    if saved.after_data_collection:
        return (
            _("Saved as version %(version)s, marked as made after data collection began.") % number
        )
    return _("Saved as version %(version)s.") % number


@require_GET
@login_required
def preregistration_canonical(request, slug, version):
    """The exact bytes a version's SHA-256 covers, to recompute it anywhere
    (`sha256sum` of the download)."""
    study, _role = get_study_for_user(request, slug)
    registered = get_object_or_404(PreRegistration, study=study, version=version)
    response = HttpResponse(
        registered.canonical_json().encode("utf-8"), content_type="application/json"
    )
    name = f"preregistration-{study.slug}-v{registered.version}.json"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
