"""The studies a token reaches: their settings and systems (any member, as
the study page), their team's roles, progress and quality flags (coordinators,
as the monitor)."""

from collections import Counter

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from api.access import reachable_memberships
from api.views.base import ApiView
from exports.report.data import quality_flag_counts
from surveys.models import LLMSystem, Study
from surveys.monitor import monitor_totals, pilot_sessions, sessions_by_step, systems_with_counts
from surveys.steps import Step

# A study's settings as the API shows them: the public link's code and the
# allocation's seed stay on the settings page (one starts sessions, the other
# predicts which system a participant gets).
STUDY_FIELDS = [
    "slug",
    "title",
    "description",
    "status",
    "mode",
    "languages",
    "fluency_languages",
    "prompting_regime",
    "min_verified_prompts",
    "min_glatteis_prompts",
    "small_sample_evaluations",
    "speeding_seconds",
    "step_targets",
    "inactivity_timeout_minutes",
    "allow_pilot_sessions",
    "require_coordinator_mfa",
    "blind_system_names",
    "participant_time_hint",
    "created_at",
    "updated_at",
]


class StudySerializer(serializers.ModelSerializer):
    # The token owner's role there, from the membership the call was allowed by.
    role = serializers.SerializerMethodField()

    class Meta:
        model = Study
        fields = ["role", *STUDY_FIELDS]

    def get_role(self, study) -> str:
        return self.context["roles"][study.pk]


class SystemSerializer(serializers.ModelSerializer):
    class Meta:
        model = LLMSystem
        # Never the endpoint's address, key variable or prompt: the systems page shows those.
        fields = [
            "id",
            "name",
            "kind",
            "vendor",
            "model_version",
            "access_mode",
            "collection_start",
            "collection_end",
            "active",
        ]


class StudyList(ApiView):
    coordinators_only = False

    @extend_schema(responses=StudySerializer(many=True), summary="Studies this token reaches")
    def get(self, request):
        memberships = reachable_memberships(request.auth).order_by("study__title", "study__pk")
        roles = {m.study_id: m.role for m in memberships}
        studies = [m.study for m in memberships]
        return Response(StudySerializer(studies, many=True, context={"roles": roles}).data)


class StudyDetail(ApiView):
    coordinators_only = False

    @extend_schema(responses=StudySerializer, summary="A study and its settings")
    def get(self, request, slug):
        study, role = self.study(slug)
        return Response(StudySerializer(study, context={"roles": {study.pk: role}}).data)


class SystemList(ApiView):
    coordinators_only = False

    @extend_schema(responses=SystemSerializer(many=True), summary="The study's LLM systems")
    def get(self, request, slug):
        study, _role = self.study(slug)
        systems = study.systems.order_by("name", "pk")
        return Response(SystemSerializer(systems, many=True).data)


class TeamSerializer(serializers.Serializer):
    roles = serializers.DictField(child=serializers.IntegerField())
    members = serializers.ListField(child=serializers.DictField())


class Team(ApiView):
    @extend_schema(responses=TeamSerializer, summary="The study's team, by role only")
    def get(self, request, slug):
        study, _role = self.study(slug)
        # Roles and since when, never who: the members page names people.
        members = list(study.memberships.order_by("created_at", "pk").values("role", "created_at"))
        roles = Counter(member["role"] for member in members)
        return Response({"roles": dict(sorted(roles.items())), "members": members})


class ProgressSerializer(serializers.Serializer):
    sessions_by_step = serializers.ListField(child=serializers.DictField())
    pilot_sessions = serializers.IntegerField()
    systems = serializers.ListField(child=serializers.DictField())
    totals = serializers.DictField(child=serializers.IntegerField())


class Progress(ApiView):
    @extend_schema(responses=ProgressSerializer, summary="Progress, as the monitor counts it")
    def get(self, request, slug):
        study, _role = self.study(slug)
        sessions_by = sessions_by_step(study)
        systems = systems_with_counts(study)
        # Counts only: the monitor's lists of sessions (participant codes) stay there.
        return Response(
            {
                "sessions_by_step": [
                    {
                        "step": step.value,
                        "label": str(step.label),
                        "sessions": sessions_by[step, False],
                    }
                    for step in Step
                ],
                "pilot_sessions": pilot_sessions(sessions_by),
                "systems": [_system_counts(system) for system in systems],
                "totals": monitor_totals(sessions_by, systems),
            }
        )


def _system_counts(system) -> dict:
    # `system` carries the monitor's annotations (surveys.monitor.systems_with_counts).
    return {
        "id": system.pk,
        "name": system.name,
        "evaluations": system.evaluation_count,
        "block1": system.block1,
        "block2": system.block2,
        "scored": system.scored_count,
    }


class QualitySerializer(serializers.Serializer):
    n = serializers.IntegerField()
    flagged_by_any = serializers.IntegerField()
    speeding_seconds = serializers.IntegerField()
    flags = serializers.ListField(child=serializers.DictField())


class Quality(ApiView):
    @extend_schema(responses=QualitySerializer, summary="Quality flags: how many each marks")
    def get(self, request, slug):
        study, _role = self.study(slug)
        return Response(quality_flag_counts(study))
