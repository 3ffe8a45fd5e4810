"""The annotation round trip's page (docs/design/criterion.md §13.2): the annotator package
and the annotation sheet to download, the import of the annotators' values, what
has been imported.

Only the study's coordinators see it: everyone else, experimenters of the
study included, gets a 404. The package is made in the request: it is one
line or row per turn of a few hundred transcripts, read in two queries.
"""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.validators import RegexValidator
from django.db.models import Count
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET

from criterion.annotations.cells import ANNOTATOR_LENGTH
from criterion.annotations.files import MAX_FILE_BYTES
from criterion.annotations.package import CONTENT_TYPES, FORMATS, package_file, package_transcripts
from criterion.annotations.services import AnnotationImportRefused, annotations_import
from criterion.annotations.sheet import (
    ANNOTATOR,
    SHEET_CONTENT_TYPES,
    SHEET_FORMATS,
    sheet_file,
)
from criterion.models import Annotation
from surveys.access import get_study_for_user


class AnnotationFileForm(forms.Form):
    file = forms.FileField(label=gettext_lazy("annotation file (CSV or XLSX)"))

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > MAX_FILE_BYTES:  # refused before it is read into memory
            raise forms.ValidationError(
                _("The file is larger than %(limit)d MB; nothing was stored.")
                % {"limit": MAX_FILE_BYTES // (1024 * 1024)}
            )
        return upload


class PackageForm(forms.Form):
    format = forms.ChoiceField(choices=[(fmt, fmt.upper()) for fmt in FORMATS])
    include_system_names = forms.BooleanField(
        label=gettext_lazy("include system names (annotators are then no longer blind)"),
        required=False,
    )


class SheetForm(forms.Form):
    annotator = forms.CharField(
        label=gettext_lazy("annotator (pseudonym)"),
        max_length=ANNOTATOR_LENGTH,
        validators=[
            RegexValidator(
                f"^{ANNOTATOR.pattern}$",
                gettext_lazy(
                    "The pseudonym starts with a letter or digit and holds only letters, "
                    "digits, spaces, “.”, “_” and “-”."
                ),
            )
        ],
    )
    format = forms.ChoiceField(choices=[(fmt, fmt.upper()) for fmt in SHEET_FORMATS])


@login_required
def annotations_page(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = AnnotationFileForm()
    refusal = None
    if request.method == "POST":
        form = AnnotationFileForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                imports = annotations_import(
                    study=study, data=upload.read(), file_name=upload.name, user=request.user
                )
            except AnnotationImportRefused as error:
                refusal = error
            else:
                messages.success(request, _imported_message(imports))
                return redirect("criterion:annotations", slug=study.slug)
    context = {
        "study": study,
        "form": form,
        "package_form": PackageForm(),
        "annotator_length": ANNOTATOR_LENGTH,
        "refusal": refusal,
        **_counts(study),
        "imports": study.annotation_imports.select_related("imported_by")[:200],
    }
    status = 400 if request.method == "POST" else 200
    return render(request, "criterion/annotations.html", context, status=status)


def _imported_message(imports) -> str:
    return _("Imported %(values)d values of %(annotators)s.") % {
        "values": sum(record.rows for record in imports),
        "annotators": ", ".join(record.annotator for record in imports),
    }


def _counts(study) -> dict:
    """Three queries: transcripts in the package, annotated per measure, annotators."""
    annotations = Annotation.objects.filter(imported_in__study=study).order_by()
    measures = (
        annotations.values("measure")
        .annotate(transcripts=Count("transcript", distinct=True), values=Count("pk"))
        .order_by("measure")
    )
    return {
        "transcripts": package_transcripts(study).count(),
        "measures": list(measures),
        "annotators": annotations.values("annotator").distinct().count(),
    }


@login_required
@require_GET
def annotation_package(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = PackageForm(request.GET)
    if not form.is_valid():
        messages.error(request, _("Choose JSONL or XLSX for the annotator package."))
        return redirect("criterion:annotations", slug=study.slug)
    fmt = form.cleaned_data["format"]
    names = form.cleaned_data["include_system_names"]
    data = package_file(study, fmt, include_system_names=names)
    response = HttpResponse(data, content_type=CONTENT_TYPES[fmt])
    stamp = timezone.localdate().isoformat()
    response["Content-Disposition"] = (
        f'attachment; filename="{study.slug}-annotator-package-{stamp}.{fmt}"'
    )
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_GET
def annotation_sheet(request, slug):
    """The sheet an annotator fills in, one row per transcript of the package."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = SheetForm(request.GET)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, _("Annotation sheet: %(error)s") % {"error": error})
        return redirect("criterion:annotations", slug=study.slug)
    fmt, annotator = form.cleaned_data["format"], form.cleaned_data["annotator"]
    response = HttpResponse(
        sheet_file(study, fmt, annotator=annotator), content_type=SHEET_CONTENT_TYPES[fmt]
    )
    name = "-".join(part for part in (study.slug, "annotation-sheet", slugify(annotator)) if part)
    response["Content-Disposition"] = (
        f'attachment; filename="{name}-{timezone.localdate().isoformat()}.{fmt}"'
    )
    response["Cache-Control"] = "no-store"
    return response
