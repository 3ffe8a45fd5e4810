"""The study report's figures through the API (docs/design/api.md §16): the
latest report's numbers, and its criterion and validation sections, as the
report job stored them (texts in English, exports/report/localize.py).

Numbers only: the images a report carries for its page and file (PNG data
URIs, and the criterion and validation sections' inline SVG charts) are
left out, for a script has no use for them and they are most of the
report's size; the points they draw are in the figures beside them.
"""

from django.urls import path
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from api.views.base import ApiView
from api.views.exports import ExportJobSerializer, job_data
from exports.services import latest_report

# A data: URI image, or an inline SVG chart (criterion/figures.py, validation/report.py).
IMAGE_PREFIXES = ("data:image", "<svg")


def without_images(value):
    """`value` without its data: URI images, at any depth: a dict loses the
    key, a list keeps the place (None) so that positions still mean what
    they meant."""
    if isinstance(value, dict):
        return {key: without_images(item) for key, item in value.items() if not _is_image(item)}
    if isinstance(value, list):
        return [None if _is_image(item) else without_images(item) for item in value]
    return value


def _is_image(value) -> bool:
    return isinstance(value, str) and value.lstrip().startswith(IMAGE_PREFIXES)


def report_numbers(report_data: dict) -> dict:
    # The report's own figures are all images: the key goes as a whole.
    return without_images({key: value for key, value in report_data.items() if key != "figures"})


def no_report_yet() -> NotFound:
    return NotFound(
        _(
            "No report yet. Start one (POST to the study's reports/) and read it here "
            "when it is ready."
        )
    )


class ReportSerializer(serializers.Serializer):
    job = ExportJobSerializer()
    report = serializers.DictField()


class Report(ApiView):
    @extend_schema(
        responses={200: ReportSerializer, 404: OpenApiResponse(description="No report yet")},
        summary="The latest report's figures (numbers, no images)",
    )
    def get(self, request, slug):
        study, _role = self.study(slug)
        job = latest_report(study)
        if job is None or not job.report_data:
            raise no_report_yet()
        return Response(
            {"job": job_data(request, study, job), "report": report_numbers(job.report_data)}
        )


def section_schema(section: str, summary: str):
    """The OpenAPI description of a section's endpoint: the job, and the section
    under its own key."""
    serializer = inline_serializer(
        f"{section.title()}Section",
        fields={"job": ExportJobSerializer(), section: serializers.DictField()},
    )
    return extend_schema_view(
        get=extend_schema(
            responses={200: serializer, 404: OpenApiResponse(description="No such section")},
            summary=summary,
        )
    )


class LatestReportSection(ApiView):
    """One section of the latest report, which only some studies' reports have."""

    section = ""
    # Why the latest report lacks the section.
    absent: str | Promise = ""

    def get(self, request, slug):
        study, _role = self.study(slug)
        job = latest_report(study)
        if job is None or not job.report_data:
            raise no_report_yet()
        figures = job.report_data.get(self.section)
        if figures is None:
            raise NotFound(str(self.absent))
        return Response(
            {"job": job_data(request, study, job), self.section: without_images(figures)}
        )


@section_schema("criterion", "The latest report's criterion section (criterion studies)")
class CriterionSection(LatestReportSection):
    section = "criterion"
    absent = gettext_lazy(
        "The latest report has no criterion section: the study has not begun the criterion "
        "study (no pre-registration, automated result or annotation)."
    )


@section_schema("validation", "The latest report's validation section (validation studies)")
class ValidationSection(LatestReportSection):
    section = "validation"
    absent = gettext_lazy(
        "The latest report has no validation section: the study had too few evaluations "
        "for it when the report was computed."
    )


urlpatterns = [
    path("studies/<slug:slug>/report/", Report.as_view(), name="report"),
    path(
        "studies/<slug:slug>/report/criterion/",
        CriterionSection.as_view(),
        name="report_criterion",
    ),
    path(
        "studies/<slug:slug>/report/validation/",
        ValidationSection.as_view(),
        name="report_validation",
    ),
]
