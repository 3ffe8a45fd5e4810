"""The account pages for personal API tokens (docs/design/api.md §16.2)."""

app_name = "api_tokens"

urlpatterns: list = []
