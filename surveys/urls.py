from django.urls import path

from surveys.views import (
    audit_log,
    chat,
    chat_panel,
    consent_texts,
    members,
    monitor,
    panel,
    personal_links,
    pilot,
    remote,
    retests,
    sessions,
    studies,
    systems,
    task_texts,
    transcripts,
)

app_name = "surveys"

# Tokens are URL-safe base64, the slug alphabet: anything else in their place
# (a NUL byte, which PostgreSQL refuses in a query) answers 404 before any lookup.
urlpatterns = [
    # Running sessions (experimenters and coordinators of the study). First:
    # every request of a participant resolves here, and Django tries the
    # patterns in order (tests/test_url_order.py).
    path("studies/<slug:slug>/sessions/start/", sessions.session_start_view, name="session_start"),
    path("sessions/<slug:token>/", sessions.session_page, name="session"),
    path("sessions/<slug:token>/prompts/", sessions.prompt_add_view, name="session_prompt_add"),
    path(
        "sessions/<slug:token>/prompts/<int:pk>/remove/",
        sessions.prompt_remove_view,
        name="session_prompt_remove",
    ),
    path("sessions/<slug:token>/answer/", sessions.shs_answer_view, name="session_answer"),
    # The built-in chat of a connected block (docs/design/transcripts.md §10.3).
    path("sessions/<slug:token>/chat/", chat.chat_send, name="session_chat"),
    path("sessions/<slug:token>/chat/retry/", chat.chat_retry_view, name="session_chat_retry"),
    path(
        "sessions/<slug:token>/turns/<int:pk>/text/",
        chat_panel.turn_text_view,
        name="session_turn_text",
    ),
    path(
        "sessions/<slug:token>/chat/turns/<int:pk>/tag/",
        chat.chat_tag_view,
        name="session_chat_tag",
    ),
    path(
        "sessions/<slug:token>/chat/turns/<int:pk>/untag/",
        chat.chat_untag_view,
        name="session_chat_untag",
    ),
    path(
        "sessions/<slug:token>/pilot-request/",
        pilot.session_pilot_request,
        name="session_pilot_request",
    ),
    path("sessions/<slug:token>/withdraw/", sessions.withdraw_view, name="session_withdraw"),
    path("studies/", studies.study_list, name="study_list"),
    path("studies/new/", studies.study_create, name="study_create"),
    path("studies/<slug:slug>/", studies.study_detail, name="study_detail"),
    path("studies/<slug:slug>/edit/", studies.study_edit, name="study_edit"),
    path("studies/<slug:slug>/status/", studies.study_status, name="study_status"),
    path("studies/<slug:slug>/consent/", consent_texts.consent_text_list, name="consent_text_list"),
    path(
        "studies/<slug:slug>/consent/<slug:language>/",
        consent_texts.consent_text_edit,
        name="consent_text_edit",
    ),
    path("studies/<slug:slug>/task/", task_texts.task_text_list, name="task_text_list"),
    path(
        "studies/<slug:slug>/task/<slug:language>/",
        task_texts.task_text_edit,
        name="task_text_edit",
    ),
    path(
        "studies/<slug:slug>/consent/versions/<int:pk>/",
        consent_texts.consent_text_version,
        name="consent_text_version",
    ),
    path("studies/<slug:slug>/systems/new/", systems.system_create, name="system_create"),
    path("studies/<slug:slug>/systems/<int:pk>/", systems.system_edit, name="system_edit"),
    path("studies/<slug:slug>/systems/<int:pk>/check/", systems.system_check, name="system_check"),
    path("studies/<slug:slug>/members/", members.member_list, name="member_list"),
    path(
        "studies/<slug:slug>/invitations/<int:pk>/revoke/",
        members.invitation_revoke,
        name="invitation_revoke",
    ),
    path(
        "studies/<slug:slug>/invitations/<int:pk>/resend/",
        members.invitation_resend_view,
        name="invitation_resend",
    ),
    path(
        "studies/<slug:slug>/members/<int:pk>/remove/",
        members.member_remove,
        name="member_remove",
    ),
    path("studies/<slug:slug>/members/<int:pk>/role/", members.member_role, name="member_role"),
    path("invitations/<slug:token>/", members.invitation_accept_view, name="invitation_accept"),
    # The public link of a remote study (docs/design/remote.md §11): no login.
    path("take/<slug:code>/", remote.take, name="remote_take"),
    path("take/<slug:code>/p/<slug:token>/", remote.take_personal, name="remote_take_personal"),
    path(
        "studies/<slug:slug>/personal-links/",
        personal_links.personal_links_view,
        name="personal_links",
    ),
    path("studies/<slug:slug>/payments/", panel.payment_list, name="payment_list"),
    # The retest wave (docs/design/validation.md §14.2): the participant's link, or staff by the
    # code.
    path("retest/<slug:token>/", retests.retest_page, name="retest"),
    path("retest/<slug:token>/slip/", retests.retest_slip_page, name="retest_slip"),
    path("studies/<slug:slug>/retests/start/", retests.retest_start_view, name="retest_start"),
    path("studies/<slug:slug>/retests/<int:pk>/", retests.retest_staff_page, name="retest_staff"),
    path("studies/<slug:slug>/payments.csv", panel.payment_list_csv, name="payment_list_csv"),
    # The study's audit log (coordinators).
    path("studies/<slug:slug>/audit/", audit_log.audit_log, name="audit_log"),
    path("studies/<slug:slug>/audit.csv", audit_log.audit_log_csv, name="audit_log_csv"),
    # Transcripts (the session's experimenter and the study's coordinators).
    path(
        "sessions/<slug:token>/transcripts/",
        transcripts.transcript_page,
        name="session_transcripts",
    ),
    path(
        "sessions/<slug:token>/transcripts/block<int:block>/import/",
        transcripts.transcript_import_view,
        name="transcript_import",
    ),
    path(
        "sessions/<slug:token>/transcripts/turns/<int:pk>/redact/",
        transcripts.turn_redact_view,
        name="transcript_turn_redact",
    ),
    # Watching and curating a study (coordinators).
    path("studies/<slug:slug>/monitor/", monitor.monitor, name="monitor"),
    path("studies/<slug:slug>/monitor/find/", monitor.session_find, name="session_find"),
    path(
        "studies/<slug:slug>/monitor/sessions/<slug:token>/",
        monitor.session_record,
        name="session_record",
    ),
    path(
        "studies/<slug:slug>/monitor/sessions/<slug:token>/consent/",
        consent_texts.consent_record,
        name="consent_record",
    ),
    path(
        "studies/<slug:slug>/monitor/sessions/<slug:token>/pilot/",
        monitor.session_pilot,
        name="session_pilot",
    ),
    path(
        "studies/<slug:slug>/monitor/sessions/<slug:token>/erase/",
        monitor.session_erase,
        name="session_erase",
    ),
    path(
        "studies/<slug:slug>/evaluations/<int:pk>/correct/",
        monitor.evaluation_correct_view,
        name="evaluation_correct",
    ),
]
