"""What every API view shares: the token as the only way in, the per-token
rate limit, problem details for every error, and one audit row per call."""

from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from api.access import study_for_call
from api.authentication import PersonalTokenAuthentication
from api.calls import api_call_record
from api.models import ApiToken
from api.parsers import CappedJSONParser
from api.problems import problem_handler
from api.throttling import PerTokenThrottle
from surveys.models import Study


class ApiView(APIView):
    authentication_classes = [PersonalTokenAuthentication]
    permission_classes = [IsAuthenticated]
    throttle_classes = [PerTokenThrottle]
    renderer_classes = [JSONRenderer]
    parser_classes = [CappedJSONParser, MultiPartParser]
    # Whether the view's study is for its coordinators only, as its page is.
    coordinators_only = True

    def get_exception_handler(self):
        return problem_handler

    def study(self, slug: str) -> tuple[Study, str]:
        """The call's study and the owner's role there (api/access.py), noted
        for the audit row."""
        study, role = study_for_call(self.request, slug, coordinator=self.coordinators_only)
        self.audited_study_id = study.pk
        return study, role

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        token = request.auth
        if isinstance(token, ApiToken):
            api_call_record(
                token=token,
                request=request,
                status=response.status_code,
                study_id=getattr(self, "audited_study_id", None),
            )
        return response
