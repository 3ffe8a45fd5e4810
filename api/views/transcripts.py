"""Transcripts of external systems (docs/design/api.md §16.4, the import of
docs/design/transcripts.md §10.4): the ended blocks of external systems a
token's owner may import a transcript for, and the import itself, through
the page's form and service.

Any member may call; each sees the blocks of the sessions whose transcripts
the page lets them import (`may_import`): a coordinator all of the study's,
an experimenter those of their own sessions. Nothing names a participant or
a session: a block is known by its id and its number in the session (1 or 2).
"""

from django.db.models import Count, Exists, OuterRef
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response

from api.problems import Refused
from api.views.base import ApiView
from api.views.form_data import bound_form, refuse_form
from surveys.access import COORDINATOR
from surveys.models import InteractionBlock, LLMSystem, Transcript, TurnRedaction
from surveys.protocol.state import ProtocolError
from surveys.protocol.transcripts import import_offered, transcript_import
from surveys.transcript_import import TranscriptError
from surveys.views.transcripts import TranscriptImportForm

# The page's form names the format `fmt`; the API calls it `format`.
ALIASES = {"format": "fmt"}


class BlockPages(PageNumberPagination):
    page_size = 100


class SystemNameSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class TranscriptSummarySerializer(serializers.Serializer):
    code = serializers.CharField(help_text="The transcript_id of exports and annotation files.")
    source = serializers.ChoiceField(choices=Transcript.Source.choices)
    turns = serializers.IntegerField()
    imported_at = serializers.DateTimeField(allow_null=True)


class ExternalBlockSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    block = serializers.IntegerField()
    system = SystemNameSerializer()
    ended_at = serializers.DateTimeField()
    transcript = TranscriptSummarySerializer(allow_null=True)
    importable = serializers.BooleanField()


class ExternalBlockPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = ExternalBlockSerializer(many=True)


class TranscriptInputSerializer(serializers.Serializer):
    """The body of a PUT, for the schema: the page's form and parser validate it."""

    format = serializers.ChoiceField(choices=Transcript.Format.choices)
    text = serializers.CharField(help_text="The exchange, as pasted on the page.")


def _blocks_to_import(study, user, role):
    """The study's blocks whose transcripts `user` may import (may_import): a
    coordinator's, all of them; an experimenter's, those of their own sessions."""
    blocks = InteractionBlock.objects.filter(session__study=study)
    return blocks if role == COORDINATOR else blocks.filter(session__experimenter=user)


def _listed_blocks(study, user, role):
    """Those of them that are ended and of external systems, with their
    transcripts, turns counted and redactions noted: one query whatever the
    number of blocks."""
    blocks = _blocks_to_import(study, user, role).filter(
        ended_at__isnull=False, system__kind=LLMSystem.Kind.EXTERNAL
    )
    redactions = TurnRedaction.objects.filter(turn__transcript__interaction=OuterRef("pk"))
    return (
        blocks.select_related("system", "transcript")
        .only(
            "block",
            "ended_at",
            "system__name",
            "system__kind",
            "transcript__code",
            "transcript__source",
            "transcript__imported_at",
        )
        .annotate(turn_count=Count("transcript__turns"), redacted=Exists(redactions))
        .order_by("-ended_at", "-pk")
    )


def _summary(transcript, turns: int) -> dict | None:
    if transcript is None:
        return None
    return {
        "code": transcript.code,
        "source": transcript.source,
        "turns": turns,
        "imported_at": transcript.imported_at,
    }


def _row(block, role) -> dict:
    transcript = getattr(block, "transcript", None)
    return {
        "id": block.pk,
        "block": block.block,
        "system": {"id": block.system_id, "name": block.system.name},
        "ended_at": block.ended_at,
        "transcript": _summary(transcript, block.turn_count),
        "importable": import_offered(block, transcript, redacted=block.redacted, role=role),
    }


class ExternalBlocks(ApiView):
    coordinators_only = False

    @extend_schema(
        responses=ExternalBlockPageSerializer,
        summary="Ended blocks of external systems, for importing their transcripts",
    )
    def get(self, request, slug):
        study, role = self.study(slug)
        paginator = BlockPages()
        page = paginator.paginate_queryset(_listed_blocks(study, request.user, role), request)
        rows = [_row(block, role) for block in page or []]
        return paginator.get_paginated_response(ExternalBlockSerializer(rows, many=True).data)


class BlockTranscript(ApiView):
    coordinators_only = False

    @extend_schema(
        request=TranscriptInputSerializer,
        responses={
            200: TranscriptSummarySerializer,
            201: TranscriptSummarySerializer,
            400: OpenApiResponse(description="Refused input: a field, or the text's line"),
            409: OpenApiResponse(description="The block cannot take an import now"),
        },
        summary="Import a block's transcript (201), or import it again (200)",
    )
    def put(self, request, slug, pk):
        study, role = self.study(slug)
        # Any block the user may import for: the service says why a running or
        # connected one cannot take a transcript (409).
        blocks = _blocks_to_import(study, request.user, role).only("block", "session_id")
        block = get_object_or_404(blocks, pk=pk)
        form = bound_form(TranscriptImportForm, request.data, aliases=ALIASES)
        if not form.is_valid():
            refuse_form(form, aliases=ALIASES)
        try:
            transcript = transcript_import(
                session_id=block.session_id,
                block=block.block,
                text=form.cleaned_data["text"],
                fmt=form.cleaned_data["fmt"],
                user=request.user,
            )
        except TranscriptError as error:
            errors = [{"line": error.line, "message": str(error)}] if error.line else None
            raise Refused(str(error), errors=errors) from None
        except ProtocolError as error:
            raise Refused(str(error), status_code=status.HTTP_409_CONFLICT) from None
        # The service stamps a new transcript's creation and import with one moment.
        created = transcript.created_at == transcript.imported_at
        summary = TranscriptSummarySerializer(_summary(transcript, transcript.turns.count()))
        return Response(
            summary.data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


urlpatterns = [
    path("studies/<slug:slug>/external-blocks/", ExternalBlocks.as_view(), name="external_blocks"),
    path(
        "studies/<slug:slug>/external-blocks/<int:pk>/transcript/",
        BlockTranscript.as_view(),
        name="block_transcript",
    ),
]
