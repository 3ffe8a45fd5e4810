from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.handlers.asgi import ASGIRequest
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from audit.changes import save_recording_changes
from audit.log import record
from audit.models import AuditEntry
from surveys.access import get_study_for_user
from surveys.connection_check import check_system
from surveys.forms import LLMSystemForm
from surveys.models import LLMSystem
from surveys.system_presets import PRESETS


@login_required
def system_create(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = LLMSystemForm(request.POST or None, study=study)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            system = form.save()
            record(
                AuditEntry.Kind.SYSTEM_ADDED,
                actor=request.user,
                study_id=study.pk,
                target=f"system {system.pk}",
                details={"name": system.name, "kind": system.kind},
            )
        messages.success(request, _("System “%(name)s” added.") % {"name": system.name})
        return redirect("surveys:study_detail", slug=study.slug)
    return _form_page(request, form, study)


@login_required
def system_edit(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    system = get_object_or_404(study.systems, pk=pk)
    form = LLMSystemForm(request.POST or None, instance=system, study=study)
    if request.method == "POST" and form.is_valid():
        # The API key's variable, the system prompt and the extra fields are
        # named, never given (audit.changes).
        save_recording_changes(
            form,
            AuditEntry.Kind.SYSTEM_CHANGED,
            actor=request.user,
            study_id=study.pk,
            target=f"system {system.pk}",
        )
        messages.success(request, _("System “%(name)s” saved.") % {"name": system.name})
        return redirect("surveys:study_detail", slug=study.slug)
    return _form_page(request, form, study, system)


def _form_page(request, form, study, system=None):
    return render(
        request,
        "surveys/system_form.html",
        # The presets go to the page's script, which fills the fields as the form's clean() would.
        {"form": form, "study": study, "system": system, "presets": PRESETS},
    )


@login_required
@require_POST
def system_check(request, slug, pk):
    """One short real call to a saved connected system, for its coordinator."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    system = get_object_or_404(study.systems, pk=pk, kind=LLMSystem.Kind.CONNECTED)
    # Under ASGI the call runs on the server's own loop, whose pool serves every chat.
    outcome = check_system(system, close_pool=not isinstance(request, ASGIRequest))
    (messages.success if outcome.ok else messages.error)(request, outcome.text)
    if request.POST.get("back") == "study":
        return redirect(reverse("surveys:study_detail", args=[study.slug]) + "#readiness-title")
    return redirect("surveys:system_edit", slug=study.slug, pk=system.pk)
