"""The automated results of the joint-use report (docs/design/criterion.md §13.4)."""

from django.urls import path

from criterion.joint_use import views

_BASE = "studies/<slug:slug>/criterion/automated-results/"

urlpatterns = [
    path(_BASE, views.automated_results, name="automated_results"),
    path(
        f"{_BASE}systems/<int:system_pk>/new/",
        views.automated_result_create,
        name="automated_result_create",
    ),
    path(f"{_BASE}<int:pk>/", views.automated_result_edit, name="automated_result_edit"),
    path(f"{_BASE}<int:pk>/delete/", views.automated_result_delete, name="automated_result_delete"),
]
