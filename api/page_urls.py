"""The account pages for personal API tokens (docs/design/api.md §16.2)."""

from django.urls import path

from api import pages

app_name = "api_tokens"

urlpatterns = [
    # The list, and where its form posts to create a token.
    path("", pages.token_list, name="list"),
    path("<int:pk>/revoke/", pages.token_revoke, name="revoke"),
]
