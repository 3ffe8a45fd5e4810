from django.urls import path

from scoring import views

app_name = "scoring"

urlpatterns = [
    path("calculator/", views.calculator, name="calculator"),
]
