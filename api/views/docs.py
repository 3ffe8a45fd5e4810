"""The schema, the browsable documentation, and 404 for every other path.

The schema is public, as the documentation of any API is: it names
endpoints and fields, never data. The documentation page is for staff
signed in to the site (members of a study, or site staff); it renders the
schema with Swagger UI from the platform's own static files (no CDN).
"""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.exceptions import NotFound
from rest_framework.permissions import AllowAny

from api.views.base import ApiView

schema = SpectacularAPIView.as_view(authentication_classes=[], permission_classes=[AllowAny])
_swagger = SpectacularSwaggerSplitView.as_view(
    url_name="api:schema",
    template_name="api/swagger_ui.html",
    authentication_classes=[],
    permission_classes=[AllowAny],
)


@login_required
def documentation(request):
    if not (request.user.is_staff or request.user.memberships.exists()):
        raise Http404
    return _swagger(request)


class Unknown(ApiView):
    """Any other path under the API: a problem, not the site's HTML 404 page."""

    @extend_schema(exclude=True)
    def get(self, request, rest=""):
        raise NotFound(_("No such endpoint."))

    post = put = patch = delete = get
