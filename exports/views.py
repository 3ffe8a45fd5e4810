"""Export pages of a study. Only the study's coordinators see any of them:
everyone else gets 404, and job URLs carry an unguessable token as well."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from exports.forms import ExportForm
from exports.models import ExportJob
from exports.report.localize import localized
from exports.services import (
    export_job_create,
    export_job_download_record,
    export_job_file,
    latest_report,
)
from surveys.access import get_study_for_user

Format = ExportJob.Format


def _get_job_for_user(request, slug: str, token: str) -> ExportJob:
    """A job of a study the user coordinates, or 404 (anonymous users included)."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    # report_data (a whole report, figures included) is for the report page only,
    # not for these pages or the status poll that runs every second.
    job = get_object_or_404(ExportJob.objects.defer("report_data"), study=study, token=token)
    job.study = study
    return job


@login_required
def export_list(request, slug):
    study, _role = get_study_for_user(request, slug, coordinator=True)
    form = ExportForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        job = export_job_create(
            study=study,
            requested_by=request.user,
            fmt=form.cleaned_data["format"],
            include_pilot=form.cleaned_data["include_pilot"],
            include_free_text=form.cleaned_data["include_free_text"],
        )
        messages.success(request, _("Export started."))
        return redirect("exports:job_detail", slug=study.slug, token=job.token)
    jobs = study.export_jobs.exclude(format=Format.REPORT).select_related("requested_by")[:50]
    return render(request, "exports/export_list.html", {"study": study, "form": form, "jobs": jobs})


def job_detail(request, slug, token):
    job = _get_job_for_user(request, slug, token)
    return render(
        request,
        "exports/job_detail.html",
        {"study": job.study, "job": job, "events": job.events.select_related("actor")},
    )


@require_GET
def job_status(request, slug, token):
    job = _get_job_for_user(request, slug, token)
    return JsonResponse(_status_payload(job), headers={"Cache-Control": "no-store"})


def _status_payload(job: ExportJob) -> dict:
    payload = {
        "status": job.status,
        "status_label": str(job.get_status_display()),
        "progress": job.progress,
        "finished": job.is_finished,
        "error": job.error_message,
        "download_url": None,
    }
    if job.is_downloadable:
        payload["download_url"] = reverse("exports:job_download", args=[job.study.slug, job.token])
    return payload


def job_download(request, slug, token):
    job = _get_job_for_user(request, slug, token)
    if job.status == ExportJob.Status.EXPIRED or (
        job.status == ExportJob.Status.SUCCEEDED and not job.is_downloadable
    ):
        return _gone(request, job)
    if job.status != ExportJob.Status.SUCCEEDED:
        raise Http404
    path = export_job_file(job)
    if path is None:
        return _gone(request, job)
    return job_file_response(job, path, user=request.user)


def job_file_response(job: ExportJob, path, *, user) -> FileResponse:
    """The job's file, its download recorded (the page's and the API's)."""
    export_job_download_record(job=job, user=user)
    response = FileResponse(
        open(path, "rb"),
        as_attachment=True,
        filename=job.download_name,
        content_type=job.content_type,
    )
    response["Cache-Control"] = "private, no-store"
    return response


def _gone(request, job: ExportJob):
    return render(request, "exports/gone.html", {"study": job.study, "job": job}, status=410)


@login_required
def study_report(request, slug):
    """The latest study report of this study; POST computes a new one."""
    study, _role = get_study_for_user(request, slug, coordinator=True)
    if request.method == "POST":
        job = export_job_create(study=study, requested_by=request.user, fmt=Format.REPORT)
        # The job page below states the status; "being computed" would be stale
        # above a report that finished before the page loaded.
        messages.success(request, _("Report requested."))
        return redirect("exports:job_detail", slug=study.slug, token=job.token)
    reports = study.export_jobs.filter(format=Format.REPORT)
    latest = latest_report(study)
    pending = reports.filter(status__in=[ExportJob.Status.QUEUED, ExportJob.Status.RUNNING]).first()
    return render(
        request,
        "exports/report_page.html",
        {
            "study": study,
            "job": latest,
            "pending": pending,
            "report": localized(latest.report_data, get_language()) if latest else None,
        },
    )
