"""The study's own settings, its systems, texts and team: each action writes
exactly one audit row on the study's chain, naming what changed and never a
text, a secret or anything of the participants (docs/design/audit.md §15.3)."""

from django.urls import reverse

from audit.models import AuditEntry
from surveys.models import ConsentText, Invitation, LLMSystem, Study, StudyMembership
from tests.audit.test_actions import assert_nothing_of_the_participants, one_new_row

Kind = AuditEntry.Kind
API_KEY = "sk-live-4c2e8a0f6b1d3957e2a4c6b8d0f1e3a5"


def _as_stored(client, url) -> dict:
    """The form's data as the page shows it: posting it back changes nothing."""
    form = client.get(url).context["form"]
    data = {}
    for name in form.fields:
        value = form[name].value()
        if value is None or value is False:
            continue
        data[name] = "on" if value is True else value
    return data


def _chain(entry: AuditEntry, study) -> tuple:
    return (entry.chain, entry.study_id)


def test_creating_a_study_is_one_row_on_its_new_chain(personas, client_for):
    from tests.surveys.test_studies import _study_form

    client = client_for("coordinator_a")

    entry = one_new_row(lambda: client.post(reverse("surveys:study_create"), _study_form()))

    study = Study.objects.get(slug="pr-2027")
    assert (entry.kind, entry.actor_id) == (Kind.STUDY_CREATED, personas["coordinator_a"].pk)
    assert _chain(entry, study) == (f"study:{study.pk}", study.pk)
    assert (entry.target, entry.details) == (f"study {study.pk}", {"slug": "pr-2027"})


def test_a_settings_save_is_one_row_with_each_changed_field(study_a, personas, client_for):
    client = client_for("coordinator_a")
    url = reverse("surveys:study_edit", args=[study_a.slug])
    data = _as_stored(client, url)
    old_seconds = study_a.speeding_seconds
    data.update(speeding_seconds=old_seconds + 7, description="Our hypotheses, in full")

    entry = one_new_row(lambda: client.post(url, data))

    assert (entry.kind, entry.actor_id) == (Kind.STUDY_CHANGED, personas["coordinator_a"].pk)
    assert _chain(entry, study_a) == (f"study:{study_a.pk}", study_a.pk)
    # The description is prose: named, never copied.
    assert entry.details == {
        "fields": {"speeding_seconds": {"old": old_seconds, "new": old_seconds + 7}},
        "fields_without_values": ["description"],
    }
    assert_nothing_of_the_participants(entry, "hypotheses")


def test_a_settings_save_that_changes_nothing_writes_nothing(study_a, client_for):
    client = client_for("coordinator_a")
    url = reverse("surveys:study_edit", args=[study_a.slug])
    before = AuditEntry.objects.count()

    assert client.post(url, _as_stored(client, url)).status_code == 302

    assert AuditEntry.objects.count() == before


def test_adding_a_system_is_one_row_without_its_prompt(study_a, personas, client_for):
    client = client_for("coordinator_a")
    data = {"name": "Hosted model", "kind": "external", "active": "on"}

    entry = one_new_row(
        lambda: client.post(reverse("surveys:system_create", args=[study_a.slug]), data)
    )

    system = LLMSystem.objects.get(study=study_a, name="Hosted model")
    assert (entry.kind, entry.actor_id) == (Kind.SYSTEM_ADDED, personas["coordinator_a"].pk)
    assert _chain(entry, study_a) == (f"study:{study_a.pk}", study_a.pk)
    assert (entry.target, entry.details) == (
        f"system {system.pk}", {"name": "Hosted model", "kind": "external"})  # fmt: skip


def test_a_system_save_names_its_key_variable_and_prompt_never_their_values(
    study_a, client_for, monkeypatch
):
    monkeypatch.setenv("SHS_LLM_KEY_HOSTED", API_KEY)
    system = study_a.systems.first()
    client = client_for("coordinator_a")
    url = reverse("surveys:system_edit", args=[study_a.slug, system.pk])
    data = _as_stored(client, url)
    data.update(
        kind="connected",
        base_url="https://8.8.8.8/v1",
        model_name="gpt-test",
        api_key_env="SHS_LLM_KEY_HOSTED",
        system_prompt="Answer briefly.",
    )

    entry = one_new_row(lambda: client.post(url, data))

    assert (entry.kind, entry.target) == (Kind.SYSTEM_CHANGED, f"system {system.pk}")
    assert _chain(entry, study_a) == (f"study:{study_a.pk}", study_a.pk)
    assert entry.details["fields"]["model_name"] == {"old": "", "new": "gpt-test"}
    assert entry.details["fields"]["kind"] == {"old": "external", "new": "connected"}
    assert {"api_key_env", "system_prompt"} <= set(entry.details["fields_without_values"])
    assert_nothing_of_the_participants(entry, API_KEY, "SHS_LLM_KEY_HOSTED", "Answer briefly")


def test_a_consent_text_saved_is_one_row_naming_its_version(study_a, personas, client_for):
    client = client_for("coordinator_a")
    url = reverse("surveys:consent_text_edit", args=[study_a.slug, "de"])
    words = {"information_sheet": "Neues Blatt", "consent_text": "Ich stimme zu"}

    entry = one_new_row(lambda: client.post(url, words))

    text = ConsentText.objects.filter(study=study_a, language="de").latest("pk")
    assert (entry.kind, entry.actor_id) == (Kind.CONSENT_VERSION, personas["coordinator_a"].pk)
    assert _chain(entry, study_a) == (f"study:{study_a.pk}", study_a.pk)
    assert entry.target == f"consent text {text.pk}"
    assert entry.details == {"language": "de", "version": text.version, "new_version": False}
    assert_nothing_of_the_participants(entry, "Neues Blatt", "Ich stimme zu")
    # The same words again are no new save.
    before = AuditEntry.objects.count()
    client.post(url, words)
    assert AuditEntry.objects.count() == before


def test_a_task_text_saved_is_one_row_without_its_words(study_a, personas, client_for):
    client = client_for("coordinator_a")
    url = reverse("surveys:task_text_edit", args=[study_a.slug, "fr"])

    entry = one_new_row(lambda: client.post(url, {"text": "Planifiez un voyage"}))

    task = study_a.task_texts.get(language="fr")
    assert (entry.kind, entry.actor_id) == (Kind.TASK_VERSION, personas["coordinator_a"].pk)
    assert _chain(entry, study_a) == (f"study:{study_a.pk}", study_a.pk)
    # The study had its French task: reworded, not new.
    assert (entry.target, entry.details) == (
        f"task text {task.pk}", {"language": "fr", "new_text": False})  # fmt: skip
    assert_nothing_of_the_participants(entry, "Planifiez")
    before = AuditEntry.objects.count()
    client.post(url, {"text": "Planifiez un voyage"})
    assert AuditEntry.objects.count() == before


def test_inviting_and_revoking_are_one_row_each(study_a, personas, client_for):
    client = client_for("coordinator_a")
    members = reverse("surveys:member_list", args=[study_a.slug])

    sent = one_new_row(
        lambda: client.post(members, {"email": "New@Example.org", "role": "experimenter"})
    )
    invitation = Invitation.objects.get(study=study_a)
    revoked = one_new_row(
        lambda: client.post(
            reverse("surveys:invitation_revoke", args=[study_a.slug, invitation.pk])
        )
    )

    rows = [(row.kind, row.actor_id, row.study_id, row.target) for row in (sent, revoked)]
    me, target = personas["coordinator_a"].pk, f"invitation {invitation.pk}"
    assert rows == [
        (Kind.INVITATION_SENT, me, study_a.pk, target),
        (Kind.INVITATION_REVOKED, me, study_a.pk, target),
    ]
    assert sent.details == {"email": "new@example.org", "role": "experimenter"}
    assert not Invitation.objects.exists()


def test_joining_by_invitation_is_one_row_by_the_new_member(study_a, personas, client_for):
    from surveys.invitations import invitation_accept, invitation_create

    invitation, _token = invitation_create(
        study=study_a, email="joiner@example.org", role="experimenter",
        invited_by=personas["coordinator_a"])  # fmt: skip

    entry = one_new_row(
        lambda: invitation_accept(invitation_id=invitation.pk, password="Long-enough-9!")
    )

    member = StudyMembership.objects.get(study=study_a, user__email="joiner@example.org")
    assert (entry.kind, entry.actor_id, entry.study_id) == (
        Kind.MEMBER_ADDED, member.user_id, study_a.pk)  # fmt: skip
    assert entry.details == {
        "email": "joiner@example.org",
        "role": "experimenter",
        "invitation": invitation.pk,
    }
    assert_nothing_of_the_participants(entry, "Long-enough-9!")


def test_a_role_change_and_a_removal_are_one_row_each(study_a, personas, client_for):
    client = client_for("coordinator_a")
    experimenter = personas["experimenter_a"]
    membership = StudyMembership.objects.get(study=study_a, user=experimenter)
    args = [study_a.slug, membership.pk]

    changed = one_new_row(
        lambda: client.post(reverse("surveys:member_role", args=args), {"role": "coordinator"})
    )
    removed = one_new_row(lambda: client.post(reverse("surveys:member_remove", args=args)))

    me, target = personas["coordinator_a"].pk, f"user {experimenter.pk}"
    assert [(row.kind, row.actor_id, row.study_id, row.target, row.details) for row in (
        changed, removed)] == [
        (Kind.MEMBER_ROLE_CHANGED, me, study_a.pk, target,
         {"email": experimenter.email, "role": {"old": "experimenter", "new": "coordinator"}}),
        (Kind.MEMBER_REMOVED, me, study_a.pk, target,
         {"email": experimenter.email, "role": "coordinator"}),
    ]  # fmt: skip
    assert not StudyMembership.objects.filter(pk=membership.pk).exists()


def test_a_status_change_is_one_row_like_a_settings_save(study_a, personas, client_for):
    client = client_for("coordinator_a")
    url = reverse("surveys:study_status", args=[study_a.slug])

    entry = one_new_row(lambda: client.post(url, {"status": "closed"}))

    assert (entry.kind, entry.actor_id) == (Kind.STUDY_CHANGED, personas["coordinator_a"].pk)
    assert _chain(entry, study_a) == (f"study:{study_a.pk}", study_a.pk)
    assert entry.details == {
        "fields": {"status": {"old": "active", "new": "closed"}},
        "fields_without_values": [],
    }
