from django.urls import include, path

app_name = "criterion"

urlpatterns = [
    path("", include("criterion.preregistration.urls")),
    path("", include("criterion.annotations.urls")),
    path("", include("criterion.joint_use.urls")),
]
