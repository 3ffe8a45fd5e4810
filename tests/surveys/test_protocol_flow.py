"""A complete supervised session in each language, as experimenter and participant
live it (docs/design/protocol.md §4)."""

import pytest

from surveys.models import ConsentRecord, ConsentText, Evaluation, StepRecord
from surveys.steps import TIMED_STEPS, Step
from tests.surveys.runner import SessionRun, answers

# The published wording of Q1 and Q10 (docs/design/instrument.md §2.1), written out independently
# here.
ITEM_TEXT = {
    "en": (
        "The response was factually reliable.",
        "The LLM ignored my instructions and continued to generate false information.",
    ),
    "de": (
        "Die Antwort war sachlich zuverlässig.",
        "Das LLM ignorierte meine Anweisungen und erzeugte weiterhin falsche Informationen.",
    ),
    "fr": (
        "La réponse était factuellement fiable.",
        "Le LLM a ignoré mes instructions et a continué à générer des fausses informations.",
    ),
}
# UI strings of the participant pages, from the German and French catalogues.
CONSENT_HEADING = {
    "en": "Information and consent",
    "de": "Information und Einwilligung",
    "fr": "Information et consentement",
}
THANKS = {"en": "Thank you!", "de": "Vielen Dank!", "fr": "Merci\u202f!"}
HAND_BACK = {
    "en": "Please hand the device back to the experimenter.",
    "de": "Bitte geben Sie das Gerät an die Versuchsleitung zurück.",
    "fr": "Veuillez rendre l'appareil à la personne responsable de la séance.",
}


def _assert_hand_back_page(run, language):
    page = run.get()
    content = page.content.decode()
    assert page["Content-Language"] == language
    assert HAND_BACK[language] in content.replace("&#x27;", "'")
    assert 'name="step" value="handback"' in content
    assert "/studies/" not in content and "logout" not in content
    return content


@pytest.mark.parametrize("language", ["en", "de", "fr"])
def test_a_complete_session(language, study_a, client_for, django_capture_on_commit_callbacks):
    ConsentText.objects.create(
        study=study_a,
        language=language,
        version="2.1",
        information_sheet=f"Sheet {language}",
        consent_text=f"I agree ({language})",
    )
    run = SessionRun(client_for("experimenter_a"), study_a, language=language)

    page = run.get()
    assert page["Content-Language"] == language
    assert f"Sheet {language}" in page.content.decode()
    assert CONSENT_HEADING[language] in page.content.decode()
    assert run.consent().status_code == 302
    assert run.session.consent.version == "2.1"
    assert run.session.step == Step.BLOCK1_INTERACTION
    _assert_hand_back_page(run, language)
    assert run.hand_back().status_code == 302
    assert 'id="prompt-form"' in run.get().content.decode()

    assert run.interaction(1).status_code == 302
    shs_page = run.get().content.decode()
    assert all(text in shs_page for text in ITEM_TEXT[language])
    assert "CC BY-NC-ND 4.0" in shs_page
    # Scoring is queued on commit; run those callbacks as a real commit would.
    with django_capture_on_commit_callbacks(execute=True):
        assert run.shs(1, answers(2, -2, 2, -2, 2, -2, 2, -2, 2, -2)).status_code == 302
        handback = _assert_hand_back_page(run, language)
        assert 'id="prompt-form"' not in handback  # the experimenter's page waits
        assert run.hand_back().status_code == 302
        assert run.interaction(2).status_code == 302
        assert run.shs(2, answers(0, 0, 0, 0, 0, 0, 0, 0, 0, 0)).status_code == 302
    # Block 2's SHS leads straight to the demographics: the participant keeps the device.
    assert 'name="age_band"' in run.get().content.decode()
    assert run.demographics().status_code == 302
    # The participant is done: their code, then the device goes back for the feedback.
    assert run.session.participant.code in _assert_hand_back_page(run, language)
    assert run.hand_back().status_code == 302
    assert 'name="demographics_length"' in run.get().content.decode()
    finished = run.feedback()
    assert finished.status_code == 302
    assert finished.url == f"/studies/{study_a.slug}/"

    session = run.session
    assert session.step == Step.COMPLETE
    assert session.ended_at is not None
    first, second = Evaluation.objects.filter(session=session).order_by("block")
    assert (first.system, second.system) == (session.first_system, session.second_system)
    assert {first.language, second.language} == {language}
    assert first.instrument_version == "shs-1.0"
    assert (first.shs, first.shs100, first.band) == (1.0, 100.0, "high")
    assert (second.shs, second.band, second.flagged_pairs) == (0.0, "moderate", "")
    assert first.shs_seconds is not None and first.shs_seconds >= 0
    assert session.feedback.clarity == 1
    assert session.demographics.gender == 9
    recorded = StepRecord.objects.filter(session=session)
    assert sorted(recorded.values_list("step", flat=True)) == sorted(TIMED_STEPS)
    assert not recorded.filter(completed_at__isnull=True).exists()
    assert recorded.get(step=Step.BLOCK1_SHS).target_minutes == 5
    assert THANKS[language] in run.get().content.decode()


def test_participant_pages_show_no_experimenter_data(study_a, client_for, personas):
    run = SessionRun(client_for("experimenter_a"), study_a)
    for step_page in ("consent", "block1_shs"):
        run.advance_to(step_page)
        content = run.get().content.decode()
        assert personas["experimenter_a"].email not in content
        assert run.session.participant.code not in content
        assert "/studies/" not in content.split("<main", 1)[1].split("Withdraw", 1)[0]


def test_experimenter_pages_show_the_running_count(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.consent()
    run.hand_back()
    run.log_prompt("block1_interaction", "verified")
    run.log_prompt("block1_interaction", "glatteis", is_challenge="on")

    page = run.get().content.decode()

    assert 'id="count-verified">1<' in page
    assert 'id="count-glatteis">1<' in page
    assert "2 Verified Knowledge prompts missing" in page


def test_shs_cannot_start_below_the_minimum_without_a_reason(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.consent()

    refused = run.interaction(1, verified=3, glatteis=1)

    assert refused.status_code == 409
    assert run.session.step == Step.BLOCK1_INTERACTION
    allowed = run.post("block1_interaction", override_reason="Participant had to leave early")
    assert allowed.status_code == 302
    block = run.session.blocks.get(block=1)
    assert block.override_reason == "Participant had to leave early"
    assert run.session.step == Step.BLOCK1_SHS


def test_ineligible_person_is_stopped_and_only_counted(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)

    response = run.consent(ai_professional="1")

    assert response.status_code == 302
    session = run.session
    assert session.step == Step.INELIGIBLE
    assert session.participant is None
    assert not StepRecord.objects.filter(session=session).exists()
    assert not ConsentRecord.objects.filter(session=session).exists()
    assert "cannot take part" in run.get().content.decode()


def test_eligible_person_must_consent(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    response = run.consent(consent="")
    assert response.status_code == 400
    assert "Consent is required" in response.content.decode()
    assert run.session.step == Step.CONSENT


def test_without_a_consent_text_the_default_statement_speaks_the_participants_language(
    study_a, client_for
):
    # Given: a German pilot session (the only kind that can start without a consent
    # text; a coordinator's, since an experimenter's pilot is only a request) in a
    # study without a German consent text, the UI in English.
    study_a.consent_texts.filter(language="de").delete()
    run = SessionRun(client_for("coordinator_a"), study_a, language="de", is_pilot=True)

    # When: the participant goes on without ticking consent.
    response = run.consent(consent="")

    # Then: the default statement and the refusal are both in German.
    page = response.content.decode()
    assert response.status_code == 400
    assert "Ich willige ein, an dieser Studie teilzunehmen." in page
    assert "Für die Teilnahme ist Ihre Einwilligung erforderlich." in page
    assert run.session.step == Step.CONSENT


def test_prompt_entries_record_category_text_and_flags(study_a, client_for):
    run = SessionRun(client_for("experimenter_a"), study_a)
    run.consent()
    run.log_prompt(
        "block1_interaction",
        "glatteis",
        text="Describe Dr. Alistair Finch's career",
        is_follow_up="on",
        is_source_request="on",
    )
    entry = run.session.blocks.get(block=1).prompts.get()
    assert entry.category == "glatteis"
    assert entry.text == "Describe Dr. Alistair Finch's career"
    assert (entry.is_follow_up, entry.is_source_request, entry.is_challenge) == (True, True, False)


def test_a_mistaken_prompt_can_be_removed(study_a, client_for):
    from django.urls import reverse

    run = SessionRun(client_for("experimenter_a"), study_a)
    run.consent()
    run.log_prompt("block1_interaction", "verified")
    entry = run.session.blocks.get(block=1).prompts.get()
    response = run.client.post(
        reverse("surveys:session_prompt_remove", args=[run.token, entry.pk]),
        {"step": "block1_interaction"},
    )
    assert response.status_code == 302
    assert not run.session.blocks.get(block=1).prompts.exists()


def test_overruns_are_allowed_and_recorded(study_a, client_for):
    from datetime import timedelta

    run = SessionRun(client_for("experimenter_a"), study_a)
    StepRecord.objects.filter(session=run.session).update(
        entered_at=run.session.created_at - timedelta(minutes=9)
    )
    assert run.consent().status_code == 302
    record = StepRecord.objects.get(session=run.session, step=Step.CONSENT)
    assert record.overran
    assert record.duration_seconds > 5 * 60


def test_draft_study_runs_only_pilot_sessions(study_a, client_for):
    from django.urls import reverse

    study_a.status = "draft"
    study_a.save()
    client = client_for("experimenter_a")
    refused = client.post(reverse("surveys:session_start", args=[study_a.slug]), {"language": "en"})
    assert refused.status_code == 302
    assert not study_a.sessions.exists()
    run = SessionRun(client, study_a, is_pilot=True)
    assert run.session.is_pilot
