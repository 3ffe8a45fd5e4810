from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from surveys.access import get_study_for_user
from surveys.forms import ConsentTextForm
from surveys.models import ConsentText


@login_required
def consent_text_list(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    texts = {text.language: text for text in study.consent_texts.all()}
    names = dict(settings.LANGUAGES)
    rows = [(code, names[code], texts.get(code)) for code in study.languages]
    return render(request, "surveys/consent_text_list.html", {"study": study, "rows": rows})


@login_required
def consent_text_edit(request, slug, language):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    if language not in study.languages:
        raise Http404
    text = ConsentText.objects.filter(study=study, language=language).first()
    form = ConsentTextForm(
        request.POST or None, instance=text or ConsentText(study=study, language=language)
    )
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, _("Information sheet and consent text saved."))
        return redirect("surveys:consent_text_list", slug=study.slug)
    return render(
        request,
        "surveys/consent_text_form.html",
        {"study": study, "form": form, "language": dict(settings.LANGUAGES)[language]},
    )
