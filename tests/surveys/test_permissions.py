"""Every study, system and membership URL, for every persona: 200 for those who
may see it, 404 for everyone else (never a 403 that leaks existence, never 500),
and the login page for anonymous visitors."""

import pytest
from django.urls import reverse

from surveys.models import Invitation

ALLOWED = {
    # url name: personas that get 200 (everyone else 404, anonymous the login page)
    "surveys:study_list": {"coordinator_a", "coordinator_b", "experimenter_a", "outsider"},
    "surveys:study_create": {"coordinator_a", "coordinator_b"},
    "surveys:study_detail": {"coordinator_a", "experimenter_a"},
    "surveys:study_edit": {"coordinator_a"},
    "surveys:system_create": {"coordinator_a"},
    "surveys:system_edit": {"coordinator_a"},
    "surveys:member_list": {"coordinator_a"},
    "surveys:consent_text_list": {"coordinator_a"},
    "surveys:consent_text_edit": {"coordinator_a"},
    "surveys:consent_text_version": {"coordinator_a"},
    "surveys:task_text_list": {"coordinator_a"},
    "surveys:task_text_edit": {"coordinator_a"},
    "surveys:monitor": {"coordinator_a"},
}
PERSONAS = ["coordinator_a", "coordinator_b", "experimenter_a", "outsider", "anonymous"]


def _url(name, study_a):
    system = study_a.systems.first()
    kwargs = {
        "surveys:study_list": {},
        "surveys:study_create": {},
        "surveys:system_edit": {"slug": study_a.slug, "pk": system.pk},
        "surveys:consent_text_edit": {"slug": study_a.slug, "language": "de"},
        "surveys:task_text_edit": {"slug": study_a.slug, "language": "de"},
        "surveys:consent_text_version": {
            "slug": study_a.slug,
            "pk": study_a.consent_texts.first().pk,
        },
    }.get(name, {"slug": study_a.slug})
    return reverse(name, kwargs=kwargs)


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_get_answers_200_or_404(name, persona, study_a, client_for):
    response = client_for(persona).get(_url(name, study_a))
    if persona == "anonymous":
        assert response.status_code == 302
        assert response.url.startswith(reverse("account_login"))
    elif persona in ALLOWED[name]:
        assert response.status_code == 200
    else:
        assert response.status_code == 404


@pytest.mark.parametrize("persona", ["coordinator_b", "experimenter_a", "outsider"])
def test_posts_outside_the_role_change_nothing(persona, study_a, client_for):
    client = client_for(persona)
    system = study_a.systems.first()
    before = (system.name, study_a.title, study_a.memberships.count())

    responses = [
        client.post(reverse("surveys:study_edit", args=[study_a.slug]), {"title": "Hijacked"}),
        client.post(reverse("surveys:system_edit", args=[study_a.slug, system.pk]), {"name": "X"}),
        client.post(reverse("surveys:system_create", args=[study_a.slug]), {"name": "New"}),
        client.post(
            reverse("surveys:member_list", args=[study_a.slug]),
            {"email": "spy@example.org", "role": "coordinator"},
        ),
    ]

    assert [r.status_code for r in responses] == [404] * 4
    system.refresh_from_db()
    study_a.refresh_from_db()
    assert (system.name, study_a.title, study_a.memberships.count()) == before
    assert study_a.systems.count() == 5
    assert not Invitation.objects.exists()


def test_system_of_another_study_is_404_under_own_study(study_a, study_b, client_for):
    foreign_system = study_b.systems.first()
    response = client_for("coordinator_a").get(
        reverse("surveys:system_edit", args=[study_a.slug, foreign_system.pk])
    )
    assert response.status_code == 404


def test_revoking_an_invitation_of_another_study_is_404(study_a, study_b, personas, client_for):
    from surveys.invitations import invitation_create

    invitation, _token = invitation_create(
        study=study_b,
        email="x@example.org",
        role="experimenter",
        invited_by=personas["coordinator_b"],
    )
    for slug in (study_a.slug, study_b.slug):
        response = client_for("coordinator_a").post(
            reverse("surveys:invitation_revoke", args=[slug, invitation.pk])
        )
        assert response.status_code == 404
    assert Invitation.objects.filter(pk=invitation.pk).exists()


def test_every_surveys_url_is_covered_by_a_permission_table():
    """A new URL must be added here or to the protocol's table."""
    from surveys.urls import urlpatterns
    from tests.surveys.test_protocol_permissions import SESSION_URLS

    covered = (
        {name.split(":")[1] for name in ALLOWED}
        | {"invitation_revoke", "invitation_accept"}
        # POST-only and per-session: tests/surveys/test_consent.py checks who reaches them.
        | {"study_status", "consent_record"}
        # Team changes: every persona in tests/surveys/test_team.py.
        | {"invitation_resend", "member_remove", "member_role"}
        # Transcripts: every persona in tests/surveys/test_transcript_*.py.
        | {"session_transcripts", "transcript_import", "transcript_turn_redact"}
        # The built-in chat: every persona in tests/surveys/test_chat_tagging.py.
        | {"session_chat", "session_chat_retry", "session_chat_tag", "session_chat_untag"}
        # A turn's whole text: tests/surveys/test_chat_turn_text.py.
        | {"session_turn_text"}
        # Test connection: every persona in tests/surveys/test_connection_check.py.
        | {"system_check"}
        # Remote studies: tests/surveys/test_remote_*.py (public by design, or coordinators).
        | {"remote_take", "remote_take_personal", "personal_links"}
        | {"payment_list", "payment_list_csv"}  # test_remote_panel.py
        # The study's audit log: every persona in tests/audit/test_pages.py.
        | {"audit_log", "audit_log_csv"}
        # The retest wave: every persona in tests/surveys/test_retest_*.py.
        | {"retest", "retest_start", "retest_staff", "retest_slip"}
        | set(SESSION_URLS)
    )
    assert {pattern.name for pattern in urlpatterns} - covered == set()
