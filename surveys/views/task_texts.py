"""The naturalistic task of each language offered (coordinators of the study only),
laid out as the consent texts are (docs/design/remote.md §11.5)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from audit.log import record
from audit.models import AuditEntry
from surveys.access import get_study_for_user
from surveys.forms import TaskTextForm
from surveys.models import TaskText


@login_required
def task_text_list(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    names = dict(settings.LANGUAGES)
    texts = {task.language: task for task in study.task_texts.all()}
    rows = [(code, names[code], texts.get(code)) for code in study.languages]
    return render(request, "surveys/task_text_list.html", {"study": study, "rows": rows})


@login_required
def task_text_edit(request, slug, language):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    if language not in study.languages:
        raise Http404
    current = TaskText.objects.filter(study=study, language=language).first()
    form = TaskTextForm(
        request.POST or None, instance=current or TaskText(study=study, language=language)
    )
    if request.method == "POST" and form.is_valid():
        # A save that changes the words is one row naming the language, never the words.
        changed = form.has_changed() or current is None
        with transaction.atomic():
            task = form.save()
            if changed:
                record(
                    AuditEntry.Kind.TASK_VERSION,
                    actor=request.user,
                    study_id=study.pk,
                    target=f"task text {task.pk}",
                    details={"language": language, "new_text": current is None},
                )
        messages.success(request, _("Task saved."))
        return redirect("surveys:task_text_list", slug=study.slug)
    return render(
        request,
        "surveys/task_text_form.html",
        {"study": study, "form": form, "language": dict(settings.LANGUAGES)[language]},
    )
