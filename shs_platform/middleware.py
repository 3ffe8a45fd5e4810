from django.conf import settings


class ContentSecurityPolicyMiddleware:
    """Adds the Content-Security-Policy header (Django 5.2 has none built in)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response
