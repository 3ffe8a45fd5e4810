"""See docs/design/criterion.md §13.1."""

from django.urls import path

from criterion.preregistration import views

urlpatterns = [
    path(
        "studies/<slug:slug>/criterion/preregistration/",
        views.preregistration,
        name="preregistration",
    ),
    path(
        "studies/<slug:slug>/criterion/preregistration/edit/",
        views.preregistration_edit,
        name="preregistration_edit",
    ),
    path(
        "studies/<slug:slug>/criterion/preregistration/v<int:version>.json",
        views.preregistration_canonical,
        name="preregistration_canonical",
    ),
]
