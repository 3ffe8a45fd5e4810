from django.contrib import admin
from django.urls import include, path

from shs_platform.health import healthz
from surveys.views import accounts
from surveys.views.studies import home

# A form too large to read, or holding NUL, says so (and that nothing was stored).
handler400 = "surveys.views.errors.bad_request"
# Every missing or hidden page, in the participant's language where one is known.
handler404 = "surveys.views.errors.page_not_found"

urlpatterns = [
    path("", home, name="home"),
    path("healthz", healthz, name="healthz"),
    # Before the other apps: a participant's requests (the session pages, the
    # autosave) resolve in surveys' first patterns. No pattern of
    # one app matches another's paths (tests/test_url_order.py).
    path("", include("surveys.urls")),
    path("i18n/", include("django.conf.urls.i18n")),
    # Ahead of allauth's own page at this address (see the view).
    path("accounts/email/", accounts.email_addresses, name="account_email"),
    path("accounts/api-tokens/", include("api.page_urls")),
    path("accounts/", include("allauth.urls")),
    path("admin/", admin.site.urls),
    path("", include("scoring.web.urls")),
    path("", include("exports.urls")),
    path("", include("criterion.urls")),
    path("", include("audit.urls")),
    path("api/v1/", include("api.urls")),
]
