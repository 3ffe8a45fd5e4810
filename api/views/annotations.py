"""Annotators' values (docs/design/api.md §16.4, the round trip of
docs/design/criterion.md §13.2): the imports recorded so far, and a new file
imported as the page imports it, the whole file or nothing. Coordinators only,
as the page."""

from django.urls import path
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from api.problems import Refused
from api.views.base import ApiView
from api.views.form_data import refuse_form
from criterion.annotations.services import AnnotationImportRefused, annotations_import
from criterion.annotations.views import AnnotationFileForm
from criterion.models import AnnotationImport

# As many as the page lists, newest first.
IMPORTS_LISTED = 200


class AnnotationImportSerializer(serializers.ModelSerializer):
    values = serializers.IntegerField(source="rows", help_text="Values this import stored.")

    class Meta:
        model = AnnotationImport
        # Not who imported it: the page names people, the API does not.
        fields = [
            "id",
            "annotator",
            "values",
            "replaced",
            "file_name",
            "file_sha256",
            "imported_at",
        ]


class AnnotationFileSerializer(serializers.Serializer):
    """The body of a POST, for the schema: the page's form validates it."""

    file = serializers.FileField(help_text="CSV (UTF-8) or XLSX, long form or annotation sheet.")


class Annotations(ApiView):
    @extend_schema(
        responses=AnnotationImportSerializer(many=True),
        summary="The annotation imports, newest first",
    )
    def get(self, request, slug):
        study, _role = self.study(slug)
        imports = study.annotation_imports.order_by("-imported_at", "-pk")[:IMPORTS_LISTED]
        return Response(AnnotationImportSerializer(imports, many=True).data)

    @extend_schema(
        request={"multipart/form-data": AnnotationFileSerializer},
        responses={
            201: AnnotationImportSerializer(many=True),
            400: OpenApiResponse(description="Refused: nothing stored; each bad row named"),
        },
        summary="Import an annotation file: one import per annotator in it",
    )
    def post(self, request, slug):
        study, _role = self.study(slug)
        form = AnnotationFileForm(files=request.FILES)
        if not form.is_valid():  # no file, or one over the limit, refused unread
            refuse_form(form)
        upload = form.cleaned_data["file"]
        try:
            imports = annotations_import(
                study=study, data=upload.read(), file_name=upload.name, user=request.user
            )
        except AnnotationImportRefused as error:
            raise Refused(
                error.message or _("The file was refused; nothing was stored."),
                errors=[
                    {
                        "row": problem.row,
                        "column": problem.column or None,
                        "message": problem.message,
                    }
                    for problem in error.problems
                ],
            ) from None
        data = AnnotationImportSerializer(imports, many=True).data
        return Response(data, status=status.HTTP_201_CREATED)


urlpatterns = [
    path("studies/<slug:slug>/annotations/", Annotations.as_view(), name="annotations"),
]
