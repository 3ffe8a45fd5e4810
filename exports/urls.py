from django.urls import path

from exports import views

app_name = "exports"

# Tokens are URL-safe base64, the slug alphabet: anything else in their place
# (a NUL byte, which PostgreSQL refuses in a query) answers 404 before any lookup.
urlpatterns = [
    path("studies/<slug:slug>/exports/", views.export_list, name="export_list"),
    path("studies/<slug:slug>/exports/<slug:token>/", views.job_detail, name="job_detail"),
    path("studies/<slug:slug>/exports/<slug:token>/status/", views.job_status, name="job_status"),
    path(
        "studies/<slug:slug>/exports/<slug:token>/download/",
        views.job_download,
        name="job_download",
    ),
    path("studies/<slug:slug>/report/", views.study_report, name="study_report"),
]
