from django.urls import path

from surveys.views import members, studies, systems

app_name = "surveys"

urlpatterns = [
    path("studies/", studies.study_list, name="study_list"),
    path("studies/new/", studies.study_create, name="study_create"),
    path("studies/<slug:slug>/", studies.study_detail, name="study_detail"),
    path("studies/<slug:slug>/edit/", studies.study_edit, name="study_edit"),
    path("studies/<slug:slug>/systems/new/", systems.system_create, name="system_create"),
    path("studies/<slug:slug>/systems/<int:pk>/", systems.system_edit, name="system_edit"),
    path("studies/<slug:slug>/members/", members.member_list, name="member_list"),
    path(
        "studies/<slug:slug>/invitations/<int:pk>/revoke/",
        members.invitation_revoke,
        name="invitation_revoke",
    ),
    path("invitations/<str:token>/", members.invitation_accept_view, name="invitation_accept"),
]
