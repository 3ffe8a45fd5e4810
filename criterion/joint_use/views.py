"""The automated factuality results of a study's systems (docs/design/criterion.md §13.4):
every member reads them, the coordinators record, correct and delete them."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from criterion.joint_use.forms import AutomatedResultForm
from criterion.joint_use.table import AUTOMATED_HIGH_FROM, latest_per_benchmark
from criterion.models import AutomatedResult
from surveys.access import COORDINATOR, get_study_for_user


@login_required
def automated_results(request, slug):
    study, role = get_study_for_user(request, slug)
    systems = study.systems.order_by("name", "pk").prefetch_related(
        Prefetch(
            "automated_results",
            queryset=AutomatedResult.objects.order_by("benchmark", "-measured_on", "-recorded_at"),
        )
    )
    rows = []
    for system in systems:
        results = list(system.automated_results.all())
        in_report = {result.pk for result in latest_per_benchmark(results)}
        rows.append({"system": system, "results": results, "in_report": in_report})
    return render(
        request,
        "criterion/automated_results.html",
        {
            "study": study,
            "rows": rows,
            "can_edit": role == COORDINATOR,
            "high_from": AUTOMATED_HIGH_FROM,
        },
    )


def _save(request, form, study):
    result = form.save(commit=False)
    result.recorded_by = request.user
    result.recorded_at = timezone.now()
    result.save()
    return _back_to_list(
        request, study, _("Result on “%(benchmark)s” saved for %(system)s."), result
    )


def _back_to_list(request, study, message: str, result: AutomatedResult):
    messages.success(
        request, message % {"benchmark": result.benchmark, "system": result.system.name}
    )
    return redirect("criterion:automated_results", slug=study.slug)


def _form_page(request, study, form, system, result=None):
    return render(
        request,
        "criterion/automated_results_form.html",
        {"study": study, "form": form, "system": system, "result": result},
    )


@login_required
@require_http_methods(["GET", "POST"])
def automated_result_create(request, slug, system_pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    system = get_object_or_404(study.systems, pk=system_pk)
    form = AutomatedResultForm(request.POST or None, instance=AutomatedResult(system=system))
    if request.method == "POST" and form.is_valid():
        return _save(request, form, study)
    return _form_page(request, study, form, system)


def _result_of(study, pk) -> AutomatedResult:
    return get_object_or_404(
        AutomatedResult.objects.select_related("system"), pk=pk, system__study=study
    )


@login_required
@require_http_methods(["GET", "POST"])
def automated_result_edit(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    result = _result_of(study, pk)
    form = AutomatedResultForm(request.POST or None, instance=result)
    if request.method == "POST" and form.is_valid():
        return _save(request, form, study)
    return _form_page(request, study, form, result.system, result)


@login_required
@require_http_methods(["GET", "POST"])
def automated_result_delete(request, slug, pk):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    result = _result_of(study, pk)
    if request.method == "POST":
        result.delete()
        message = _("Result on “%(benchmark)s” deleted for %(system)s.")
        return _back_to_list(request, study, message, result)
    return render(
        request, "criterion/automated_results_delete.html", {"study": study, "result": result}
    )
