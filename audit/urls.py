from django.urls import path

from audit import views

app_name = "audit"

urlpatterns = [
    path("audit/", views.site_log, name="site_log"),
    path("audit.csv", views.site_log_csv, name="site_log_csv"),
]
