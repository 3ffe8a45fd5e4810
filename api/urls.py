"""The API's addresses, under /api/v1/ (docs/design/api.md §16.4)."""

from django.urls import path, re_path

from api.views import annotations, automated, docs, exports, figures, studies, transcripts

app_name = "api"

urlpatterns = [
    path("schema/", docs.schema, name="schema"),
    path("docs/", docs.documentation, name="docs"),
    path("studies/", studies.StudyList.as_view(), name="study_list"),
    path("studies/<slug:slug>/", studies.StudyDetail.as_view(), name="study_detail"),
    path("studies/<slug:slug>/systems/", studies.SystemList.as_view(), name="system_list"),
    path("studies/<slug:slug>/team/", studies.Team.as_view(), name="team"),
    path("studies/<slug:slug>/progress/", studies.Progress.as_view(), name="progress"),
    path("studies/<slug:slug>/quality/", studies.Quality.as_view(), name="quality"),
    *exports.urlpatterns,
    *figures.urlpatterns,
    *annotations.urlpatterns,
    *automated.urlpatterns,
    *transcripts.urlpatterns,
    # Last: whatever else lies under the API is a problem in the API's words.
    re_path(r"^(?P<rest>.*)$", docs.Unknown.as_view(), name="unknown"),
]
