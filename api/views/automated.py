"""A system's automated factuality results (docs/design/api.md §16.4, for the
joint-use table of docs/design/criterion.md §13.4): every member reads them,
as on the page; the coordinators record one, through the page's form."""

from django.shortcuts import get_object_or_404
from django.urls import path
from django.utils import timezone
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from api.views.base import ApiView
from api.views.form_data import bound_form, refuse_form
from criterion.joint_use.forms import AutomatedResultForm
from criterion.joint_use.table import latest_per_benchmark
from criterion.models import AutomatedResult
from surveys.access import COORDINATOR

# The page's form's fields: the API takes and shows what the page does.
FIELDS = list(AutomatedResultForm.base_fields)


class AutomatedResultSerializer(serializers.ModelSerializer):
    # Whether the study report shows it: the latest result of its benchmark.
    in_report = serializers.SerializerMethodField()

    class Meta:
        model = AutomatedResult
        fields = ["id", *FIELDS, "recorded_at", "in_report"]

    def get_in_report(self, result) -> bool:
        return result.pk in self.context["in_report"]


class AutomatedResultInput(serializers.ModelSerializer):
    """The body of a POST, for the schema: the page's form validates it."""

    class Meta:
        model = AutomatedResult
        fields = FIELDS


class AutomatedResults(ApiView):
    coordinators_only = False  # reading is for every member; POST checks the role

    @extend_schema(
        responses=AutomatedResultSerializer(many=True),
        summary="A system's automated factuality results",
    )
    def get(self, request, slug, system_pk):
        study, _role = self.study(slug)
        system = get_object_or_404(study.systems, pk=system_pk)
        return _results(system)

    @extend_schema(
        request=AutomatedResultInput,
        responses={
            201: AutomatedResultSerializer,
            400: OpenApiResponse(description="Refused input, each field named"),
        },
        summary="Record a system's automated factuality result (coordinators)",
    )
    def post(self, request, slug, system_pk):
        study, role = self.study(slug)
        if role != COORDINATOR:  # as the page's form answers an experimenter
            raise NotFound(_("Not found, or not yours to see."))
        system = get_object_or_404(study.systems, pk=system_pk)
        form = bound_form(
            AutomatedResultForm, request.data, instance=AutomatedResult(system=system)
        )
        if not form.is_valid():
            refuse_form(form)
        # As the page's _save: who recorded it and when.
        result = form.save(commit=False)
        result.recorded_by = request.user
        result.recorded_at = timezone.now()
        result.save()
        return _results(system, created=result)


def _results(system, *, created: AutomatedResult | None = None) -> Response:
    """The system's results as the page orders them, or the one just recorded;
    either way with whether the report shows it."""
    results = list(system.automated_results.order_by("benchmark", "-measured_on", "-recorded_at"))
    context = {"in_report": {result.pk for result in latest_per_benchmark(results)}}
    if created is None:
        return Response(AutomatedResultSerializer(results, many=True, context=context).data)
    data = AutomatedResultSerializer(created, context=context).data
    return Response(data, status=status.HTTP_201_CREATED)


urlpatterns = [
    path(
        "studies/<slug:slug>/systems/<int:system_pk>/automated-results/",
        AutomatedResults.as_view(),
        name="automated_results",
    ),
]
