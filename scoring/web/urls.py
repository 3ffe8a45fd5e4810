from django.urls import path, re_path

from scoring.web import views

app_name = "scoring"

urlpatterns = [
    path("calculator/", views.calculator, name="calculator"),
    # A link in one language, to share: /de/calculator/ shows the whole page in German.
    re_path(r"^(?P<language>en|de|fr)/calculator/$", views.calculator, name="calculator_in"),
    re_path(
        r"^calculator/result\.(?P<file_format>json|csv)$",
        views.calculator_download,
        name="calculator_download",
    ),
    path("api/score/", views.api_score, name="api_score"),
]
