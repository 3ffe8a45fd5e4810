"""Consent and ethics: readiness before activation, no real session
without a consent text, consent versions kept once consented, the printable
consent record, and the eligibility question in the study's own languages."""

import pytest
from django.urls import reverse

from surveys.consent import consent_text_revise
from surveys.models import (
    ConsentRecord,
    ConsentText,
    ConsentTextInUse,
    LLMSystem,
    Study,
    StudyMembership,
    StudySession,
)
from surveys.models.studies import next_consent_version
from surveys.protocol.flow import session_start
from surveys.protocol.state import ProtocolError
from surveys.steps import Step
from tests.surveys.runner import SessionRun


def _draft(study):
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    study.refresh_from_db()
    return study


def _activate(client, study):
    return client.post(reverse("surveys:study_status", args=[study.slug]), {"status": "active"})


# -- readiness and activation -------------------------------------------------------


def test_a_study_with_a_missing_french_consent_text_cannot_be_activated(study_a, client_for):
    # Given: a draft study offering en, de, fr, with no French consent text.
    study = _draft(study_a)
    study.consent_texts.filter(language="fr").delete()
    client = client_for("coordinator_a")

    # When: the coordinator activates it.
    response = _activate(client, study)

    # Then: it stays a draft, and the page says the French text is missing.
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT
    page = client.get(response.url).content.decode()
    assert "cannot become active yet" in page
    assert "Information sheet and consent text: French" in page


def test_a_ready_study_is_activated(study_a, client_for):
    study = _draft(study_a)
    response = _activate(client_for("coordinator_a"), study)
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.status == Study.Status.ACTIVE


@pytest.mark.parametrize("gap", ["systems", "experimenter"])
def test_activation_needs_two_active_systems_and_an_experimenter(gap, study_a, client_for):
    study = _draft(study_a)
    if gap == "systems":
        LLMSystem.objects.filter(study=study).exclude(pk=study.systems.first().pk).update(
            active=False
        )
    else:
        StudyMembership.objects.filter(study=study, role=StudyMembership.Role.EXPERIMENTER).delete()
    _activate(client_for("coordinator_a"), study)
    study.refresh_from_db()
    assert study.status == Study.Status.DRAFT


def test_the_study_page_shows_the_readiness_check_with_what_is_missing(study_a, client_for):
    study = _draft(study_a)
    study.consent_texts.filter(language="fr").delete()
    LLMSystem.objects.filter(study=study).update(active=False)

    page = client_for("coordinator_a").get(reverse("surveys:study_detail", args=[study.slug]))

    text = page.content.decode()
    assert "Readiness" in text
    assert "0 active; add or activate 2 more." in text
    assert "✗ Information sheet and consent text: French" in text
    assert "✓ Information sheet and consent text: German" in text
    assert "✓ At least one experimenter" in text


def test_the_readiness_check_is_for_coordinators_only(study_a, client_for):
    page = client_for("experimenter_a").get(reverse("surveys:study_detail", args=[study_a.slug]))
    assert page.status_code == 200
    assert "Readiness" not in page.content.decode()


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "outsider"])
def test_only_the_studys_coordinators_change_its_status(persona, study_a, client_for):
    response = client_for(persona).post(
        reverse("surveys:study_status", args=[study_a.slug]), {"status": "closed"}
    )
    assert response.status_code == 404
    study_a.refresh_from_db()
    assert study_a.status == Study.Status.ACTIVE


def test_an_unknown_status_changes_nothing(study_a, client_for):
    client_for("coordinator_a").post(
        reverse("surveys:study_status", args=[study_a.slug]), {"status": "deleted"}
    )
    study_a.refresh_from_db()
    assert study_a.status == Study.Status.ACTIVE


def test_the_settings_form_cannot_activate_a_study(study_a, client_for):
    # The status changes only where the readiness is checked.
    study = _draft(study_a)
    study.consent_texts.filter(language="fr").delete()
    form = client_for("coordinator_a").get(reverse("surveys:study_edit", args=[study.slug]))
    assert 'name="status"' not in form.content.decode()


# -- starting a session -----------------------------------------------------------------


def test_no_real_session_starts_in_a_language_without_consent_text(study_a, client_for):
    # Given: an active study whose French text was never written (a language added later).
    study_a.consent_texts.filter(language="fr").delete()
    client = client_for("experimenter_a")

    # When: the experimenter starts a French session.
    response = client.post(
        reverse("surveys:session_start", args=[study_a.slug]), {"language": "fr"}
    )

    # Then: no session, and why.
    assert response.status_code == 302
    assert not StudySession.objects.exists()
    page = client.get(response.url).content.decode()
    assert "no information sheet and consent text in this language" in page


def test_a_pilot_session_may_start_without_a_consent_text(study_a, client_for):
    # A coordinator's pilot: an experimenter's is only a request and starts as a real session.
    study_a.consent_texts.filter(language="fr").delete()
    run = SessionRun(client_for("coordinator_a"), study_a, language="fr", is_pilot=True)
    assert run.consent().status_code == 302
    record = ConsentRecord.objects.get(session=run.session)
    assert (record.consent_text, record.version) == (None, "")


def test_session_start_service_refuses_without_consent_text(study_a, personas):
    study_a.consent_texts.filter(language="de").delete()
    with pytest.raises(ProtocolError):
        session_start(study=study_a, experimenter=personas["experimenter_a"], language="de")
    assert not StudySession.objects.exists()


# -- versions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "version, following", [("1.0", "1.1"), ("1.9", "1.10"), ("2.3", "2.4"), ("v3", "v3.1")]
)
def test_versions_are_numbered_major_minor(version, following):
    assert next_consent_version(version) == following


def _edit(client, study, language, sheet, statement):
    return client.post(
        reverse("surveys:consent_text_edit", args=[study.slug, language]),
        {"information_sheet": sheet, "consent_text": statement},
    )


def test_editing_a_consented_text_makes_version_1_1_and_keeps_1_0(study_a, client_for):
    # Given: a participant consented to the German version 1.0.
    run = SessionRun(client_for("experimenter_a"), study_a, language="de")
    run.consent()
    original = ConsentText.current(study_a.pk, "de")
    words = original.wording
    client = client_for("coordinator_a")

    # When: the coordinator changes the German wording.
    response = _edit(client, study_a, "de", "Neues Informationsblatt", "Ich willige ein.")

    # Then: the new wording is version 1.1, shown from now on; 1.0 is unchanged,
    # still the version the participant agreed to, and readable in the history.
    assert response.status_code == 302
    current = ConsentText.current(study_a.pk, "de")
    assert (current.version, current.information_sheet) == ("1.1", "Neues Informationsblatt")
    original.refresh_from_db()
    assert (original.version, original.wording) == ("1.0", words)
    assert run.session.consent.consent_text == original
    history = client.get(reverse("surveys:consent_text_list", args=[study_a.slug])).content
    assert b"1.1" in history and b"1.0" in history
    old_page = client.get(reverse("surveys:consent_text_version", args=[study_a.slug, original.pk]))
    assert words[0] in old_page.content.decode()

    # And the next participant consents to 1.1.
    second = SessionRun(client_for("experimenter_a"), study_a, language="de")
    second.consent()
    assert second.session.consent.version == "1.1"


def test_a_text_no_one_consented_to_is_corrected_in_place(study_a):
    revision = consent_text_revise(
        study=study_a, language="en", information_sheet="Fixed typo", consent_text="I agree."
    )
    assert (revision.new_version, revision.text.version) == (False, "1.0")
    assert study_a.consent_texts.filter(language="en").count() == 1


def test_saving_the_same_words_creates_no_version(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.consent()
    text = ConsentText.current(study_a.pk, "en")
    revision = consent_text_revise(
        study=study_a,
        language="en",
        information_sheet=text.information_sheet,
        consent_text=text.consent_text,
    )
    assert not revision.changed
    assert study_a.consent_texts.filter(language="en").count() == 1


def test_an_empty_text_is_refused_and_changes_nothing(study_a, client_for):
    before = ConsentText.current(study_a.pk, "en").wording
    response = _edit(client_for("coordinator_a"), study_a, "en", "   ", "I agree.")
    assert response.status_code == 200
    assert ConsentText.current(study_a.pk, "en").wording == before


def test_a_consented_version_cannot_be_changed_even_directly(study_a, client_for):
    SessionRun(client_for("experimenter_a"), study_a).consent()
    text = ConsentText.current(study_a.pk, "en")
    text.consent_text = "Something else"
    with pytest.raises(ConsentTextInUse):
        text.save()


def test_a_consent_is_refused_when_the_text_changed_while_it_was_shown(study_a, client_for):
    # Given: the consent page shows version 1.0 (no one consented yet).
    run = SessionRun(client_for("experimenter_a"), study_a)
    shown = ConsentText.current(study_a.pk, "en").fingerprint
    # When: the coordinator corrects it in place before the participant submits.
    consent_text_revise(
        study=study_a, language="en", information_sheet="Other words", consent_text="I agree."
    )
    response = run.consent(shown_text=shown)
    # Then: nothing is recorded; the page shows the current text again.
    assert response.status_code == 409
    assert run.session.step == Step.CONSENT
    assert not ConsentRecord.objects.exists()
    assert "Other words" in response.content.decode()


# -- the consent record -----------------------------------------------------------------


def _record_url(study, session):
    return reverse("surveys:consent_record", args=[study.slug, session.token])


def test_the_consent_record_holds_what_the_participant_agreed_to(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a, language="fr")
    run.consent()
    session = run.session
    text = ConsentText.current(study_a.pk, "fr")

    response = client_for("coordinator_a").get(_record_url(study_a, session))

    page = response.content.decode()
    assert response.status_code == 200
    for expected in (
        study_a.title,
        session.participant.code,
        "French",
        "1.0",
        text.information_sheet,
        text.consent_text,
    ):
        assert expected in page
    assert "consent_record.css" in page  # its print stylesheet: "print to PDF"


def test_the_consent_record_downloads_as_a_file(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.consent()
    response = client_for("coordinator_a").get(_record_url(study_a, run.session) + "?download=1")
    assert response["Content-Disposition"] == (
        f'attachment; filename="consent-{run.session.participant.code}.html"'
    )


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "outsider"])
def test_only_coordinators_of_the_study_see_a_consent_record(persona, study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.consent()
    assert client_for(persona).get(_record_url(study_a, run.session)).status_code == 404


def test_a_consent_record_is_not_reached_through_another_study(study_a, study_b, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.consent()
    url = reverse("surveys:consent_record", args=[study_b.slug, run.session.token])
    assert client_for("coordinator_b").get(url).status_code == 404


# -- eligibility follows the study's languages -------------------------------------------


def _consent_page(client_for, study, language):
    return SessionRun(client_for("experimenter_a"), study, language=language).get()


def test_a_study_in_german_and_english_asks_the_papers_question(study_a, client_for):
    Study.objects.filter(pk=study_a.pk).update(languages=["en", "de"])
    study_a.refresh_from_db()
    page = _consent_page(client_for, study_a, "en").content.decode()
    assert "Are you fluent in German or English?" in page


def test_a_study_offering_french_asks_about_its_own_languages(study_a, client_for):
    page = _consent_page(client_for, study_a, "fr").content.decode()
    assert "Parlez-vous couramment l&#x27;allemand, l&#x27;anglais ou le français ?" in page


def test_the_coordinator_sets_the_languages_of_the_fluency_question(study_a, client_for):
    client = client_for("coordinator_a")
    form = client.get(reverse("surveys:study_edit", args=[study_a.slug])).context["form"]
    data = {
        key: value
        for key, value in form.initial.items()
        if value is not None and key not in ("fluency_languages", "step_targets")
    }
    for name, field in form.fields.items():
        if name.startswith("target_"):
            data[name] = field.initial
    data.update(languages=["en", "de", "fr"], fluency_languages=["fr"])
    response = client.post(reverse("surveys:study_edit", args=[study_a.slug]), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    study_a.refresh_from_db()
    assert study_a.fluency_languages == ["fr"]
    page = _consent_page(client_for, study_a, "en").content.decode()
    assert "Are you fluent in French?" in page


def test_the_session_record_links_to_the_consent_record(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.consent()
    page = client_for("coordinator_a").get(
        reverse("surveys:session_record", args=[study_a.slug, run.session.token])
    )
    assert _record_url(study_a, run.session) in page.content.decode()
    assert "Consent record (version 1.0)" in page.content.decode()
