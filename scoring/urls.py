from django.urls import path, re_path

from scoring import views

app_name = "scoring"

urlpatterns = [
    path("calculator/", views.calculator, name="calculator"),
    re_path(
        r"^calculator/result\.(?P<file_format>json|csv)$",
        views.calculator_download,
        name="calculator_download",
    ),
    path("api/score/", views.api_score, name="api_score"),
]
