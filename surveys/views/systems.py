from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _

from surveys.access import get_study_for_user
from surveys.forms import LLMSystemForm


@login_required
def system_create(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = LLMSystemForm(request.POST or None, study=study)
    if request.method == "POST" and form.is_valid():
        system = form.save()
        messages.success(request, _("System “%(name)s” added.") % {"name": system.name})
        return redirect("surveys:study_detail", slug=study.slug)
    return render(request, "surveys/system_form.html", {"form": form, "study": study})


@login_required
def system_edit(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    system = get_object_or_404(study.systems, pk=pk)
    form = LLMSystemForm(request.POST or None, instance=system, study=study)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("System “%(name)s” saved.") % {"name": system.name})
        return redirect("surveys:study_detail", slug=study.slug)
    return render(
        request, "surveys/system_form.html", {"form": form, "study": study, "system": system}
    )
