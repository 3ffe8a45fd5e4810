"""Filled in by the API work (docs/design/api.md §16)."""

urlpatterns: list = []
