from django.urls import path

from criterion.annotations import views

urlpatterns = [
    path(
        "studies/<slug:slug>/criterion/annotations/",
        views.annotations_page,
        name="annotations",
    ),
    path(
        "studies/<slug:slug>/criterion/annotations/package/",
        views.annotation_package,
        name="annotation_package",
    ),
    path(
        "studies/<slug:slug>/criterion/annotations/sheet/",
        views.annotation_sheet,
        name="annotation_sheet",
    ),
]
