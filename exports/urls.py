from django.urls import path

from exports import views

app_name = "exports"

urlpatterns = [
    path("studies/<slug:slug>/exports/", views.export_list, name="export_list"),
    path("studies/<slug:slug>/exports/<str:token>/", views.job_detail, name="job_detail"),
    path("studies/<slug:slug>/exports/<str:token>/status/", views.job_status, name="job_status"),
    path(
        "studies/<slug:slug>/exports/<str:token>/download/",
        views.job_download,
        name="job_download",
    ),
    path("studies/<slug:slug>/report/", views.study_report, name="study_report"),
]
