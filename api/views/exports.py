"""Export and report jobs through the API (docs/design/api.md §16): start one,
ask for its status until it is finished, download its file. For the study's
coordinators only, as the export pages; a download leaves the same rows as
one from the page (exports.services.export_job_download_record)."""

from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from api.problems import Refused, field_errors, problem
from api.views.base import ApiView
from exports.forms import ExportForm
from exports.models import ExportJob
from exports.services import export_job_create, export_job_file
from exports.views import job_file_response
from surveys.models import Study

Format = ExportJob.Format
Status = ExportJob.Status
# As many as the export page lists.
LISTED = 50


class ExportJobSerializer(serializers.ModelSerializer):
    """A job as the API shows it: its state, and where to poll and download it."""

    url = serializers.SerializerMethodField()
    status_label = serializers.CharField(source="get_status_display")
    finished = serializers.BooleanField(source="is_finished")
    error = serializers.CharField(source="error_message")
    download_url = serializers.SerializerMethodField()

    class Meta:
        model = ExportJob
        fields = [
            "token",
            "url",
            "format",
            "status",
            "status_label",
            "progress",
            "finished",
            "include_pilot",
            "include_free_text",
            "created_at",
            "finished_at",
            "expires_at",
            "file_size",
            "error",
            "download_url",
        ]
        read_only_fields = fields

    def get_url(self, job) -> str:
        return self._address("api:export_job", job)

    def get_download_url(self, job) -> str | None:
        return self._address("api:export_file", job) if job.is_downloadable else None

    def _address(self, name: str, job: ExportJob) -> str:
        # The study comes from the call, not from each job: no query per job.
        slug = self.context["study"].slug
        return self.context["request"].build_absolute_uri(reverse(name, args=[slug, job.token]))


def job_data(request, study: Study, job_or_jobs, *, many: bool = False):
    context = {"request": request, "study": study}
    return ExportJobSerializer(job_or_jobs, many=many, context=context).data


def jobs_of(study: Study):
    # report_data (a whole report, figures included) is for the report's own endpoints.
    return ExportJob.objects.defer("report_data").filter(study=study)


def started(request, study: Study, job: ExportJob) -> Response:
    """202 Accepted: the job is queued (or done already); its address to poll."""
    data = job_data(request, study, job)
    return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": data["url"]})


class ExportRequestSerializer(serializers.Serializer):
    """The body of a new export: the export page's form, in JSON."""

    # Those of the page's form; the SPSS ones only where SPSS files can be written.
    format = serializers.ChoiceField(choices=[f for f in Format.values if f != Format.REPORT])
    include_pilot = serializers.BooleanField(default=False)
    include_free_text = serializers.BooleanField(default=False)


class ExportList(ApiView):
    @extend_schema(
        responses=ExportJobSerializer(many=True),
        summary="The study's exports, newest first (at most 50; reports are under reports/)",
    )
    def get(self, request, slug):
        study, _role = self.study(slug)
        jobs = jobs_of(study).exclude(format=Format.REPORT)[:LISTED]
        return Response(job_data(request, study, jobs, many=True))

    @extend_schema(
        request=ExportRequestSerializer,
        responses={202: ExportJobSerializer, 400: OpenApiResponse(description="Refused input")},
        summary="Start an export",
    )
    def post(self, request, slug):
        study, _role = self.study(slug)
        if not isinstance(request.data, dict):
            raise Refused(_("Nothing was stored: the request has errors."))
        # The page's own form: the same choices, the same refusals in the same words.
        form = ExportForm(request.data)
        if not form.is_valid():
            raise Refused(
                _("Nothing was stored: the request has errors."), field_errors(form.errors)
            )
        job = export_job_create(
            study=study,
            requested_by=request.user,
            fmt=form.cleaned_data["format"],
            include_pilot=form.cleaned_data["include_pilot"],
            include_free_text=form.cleaned_data["include_free_text"],
        )
        return started(request, study, job)


class ReportJobs(ApiView):
    @extend_schema(
        responses=ExportJobSerializer(many=True), summary="The study's report jobs, newest first"
    )
    def get(self, request, slug):
        study, _role = self.study(slug)
        jobs = jobs_of(study).filter(format=Format.REPORT)[:LISTED]
        return Response(job_data(request, study, jobs, many=True))

    @extend_schema(
        request=None, responses={202: ExportJobSerializer}, summary="Compute a new report"
    )
    def post(self, request, slug):
        study, _role = self.study(slug)
        job = export_job_create(study=study, requested_by=request.user, fmt=Format.REPORT)
        return started(request, study, job)


class JobDetail(ApiView):
    @extend_schema(responses=ExportJobSerializer, summary="An export or report job: its status")
    def get(self, request, slug, token):
        study, _role = self.study(slug)
        job = get_object_or_404(jobs_of(study), token=token)
        return Response(job_data(request, study, job), headers={"Cache-Control": "no-store"})


class JobFile(ApiView):
    @extend_schema(
        responses={
            (200, "application/octet-stream"): OpenApiTypes.BINARY,
            409: OpenApiResponse(description="Not finished yet, or failed"),
            410: OpenApiResponse(description="Expired: the file was deleted"),
        },
        summary="Download the finished file",
    )
    def get(self, request, slug, token):
        study, _role = self.study(slug)
        job = get_object_or_404(jobs_of(study), token=token)
        job.study = study
        if job.status in (Status.QUEUED, Status.RUNNING):
            return problem(409, _("This job is not ready yet: ask for its status until it is."))
        if job.status == Status.FAILED:
            return problem(409, _("This job failed and has no file. Start a new one."))
        # As the page: expired, or its file gone from storage (410, the page's words).
        path = export_job_file(job) if job.is_downloadable else None
        if path is None:
            return problem(410, gone_detail())
        return job_file_response(job, path, user=request.user)


def gone_detail() -> str:
    return "{}. {}".format(
        _("This export is no longer available"),
        _(
            "Export files are kept for a limited time and then deleted, so that anonymized data "
            "does not linger. Start a new export to get the current data."
        ),
    )


urlpatterns = [
    path("studies/<slug:slug>/exports/", ExportList.as_view(), name="export_list"),
    path("studies/<slug:slug>/exports/<slug:token>/", JobDetail.as_view(), name="export_job"),
    path("studies/<slug:slug>/exports/<slug:token>/file/", JobFile.as_view(), name="export_file"),
    path("studies/<slug:slug>/reports/", ReportJobs.as_view(), name="report_jobs"),
]
