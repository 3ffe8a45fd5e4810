from django.contrib import messages
from django.shortcuts import redirect

from surveys.access import SecondFactorRequired


class SecondFactorRequiredMiddleware:
    """Sends coordinators of studies that require TOTP to set it up first."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, SecondFactorRequired):
            messages.warning(request, str(exception))
            return redirect("mfa_activate_totp")
        return None
