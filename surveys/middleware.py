from django.contrib import messages
from django.core.exceptions import BadRequest
from django.http import Http404
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


def _holds_nul(values) -> bool:
    return any(
        "\x00" in key or any("\x00" in value for value in values.getlist(key)) for key in values
    )


class RefuseNulCharactersMiddleware:
    """Stops a NUL character in the path, a query or form parameter, or a cookie
    before it reaches a query.

    PostgreSQL refuses text holding NUL (SQLite takes it), so such a value
    would end as a 500 wherever a view looks it up. No form or link of the
    platform sends one: the path answers 404, a parameter 400, and a cookie
    holding one is ignored (as if the browser had sent none).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path_info:
            raise Http404
        if _holds_nul(request.GET) or (request.method == "POST" and _holds_nul(request.POST)):
            raise BadRequest("A parameter holds a NUL character.")
        for name in [name for name, value in request.COOKIES.items() if "\x00" in name + value]:
            del request.COOKIES[name]
        return self.get_response(request)
