"""An active study never runs a real session in a language one of its companion
scales has no published wording in (docs/design/validation.md §14.1): activation checks
it, and so do every session start and every change of the study's settings
afterwards, since languages and scales may change while the study runs."""

import pytest
from django.test import Client
from django.urls import reverse

from surveys.models import Study, StudySession
from surveys.protocol.flow import session_start
from surveys.protocol.state import ProtocolError
from tests.surveys.remote import take_url
from tests.surveys.runner import SessionRun
from tests.surveys.test_companion_settings import _edit

# The SCS is published in English only, the SUS in English, German and French
# (scoring.instruments.companions.scs, .sus).
SCS = "System Causability Scale (SCS)"


def _give(study: Study, scales: list[str], **fields) -> Study:
    Study.objects.filter(pk=study.pk).update(companion_scales=scales, **fields)
    study.refresh_from_db()
    return study


# -- starting a session -----------------------------------------------------------


def test_no_real_session_starts_in_a_language_a_scale_lacks(study_a, client_for, personas):
    # Given: an active study that gained the SCS (English only) but still offers German.
    _give(study_a, ["sus", "scs"])
    client = client_for("experimenter_a")

    # When: the experimenter starts a German session.
    response = client.post(
        reverse("surveys:session_start", args=[study_a.slug]), {"language": "de"}
    )

    # Then: no session, and the page names the scale.
    assert response.status_code == 302
    assert not StudySession.objects.exists()
    page = client.get(response.url).content.decode()
    assert f"without published wording in this language: {SCS}" in page
    with pytest.raises(ProtocolError, match=r"SCS"):
        session_start(study=study_a, experimenter=personas["experimenter_a"], language="fr")
    assert not StudySession.objects.exists()


def test_the_scales_languages_and_pilots_still_start(study_a, client_for):
    _give(study_a, ["sus", "scs"], allow_pilot_sessions=True)

    english = SessionRun(client_for("experimenter_a"), study_a, language="en").session
    # A coordinator's pilot tries the pages before the wording is there.
    pilot = SessionRun(client_for("coordinator_a"), study_a, language="de", is_pilot=True).session

    assert (english.language, english.is_pilot) == ("en", False)
    assert (pilot.language, pilot.is_pilot) == ("de", True)


def test_a_remote_participant_cannot_start_in_a_language_a_scale_lacks(remote_study):
    _give(remote_study, ["scs"])

    refused = Client().post(take_url(remote_study), {"action": "start", "language": "de"})
    started = Client().post(take_url(remote_study), {"action": "start", "language": "en"})

    assert refused.status_code == 503
    assert started.status_code == 302
    assert list(StudySession.objects.values_list("language", flat=True)) == ["en"]


# -- the study form ---------------------------------------------------------------


def test_an_active_study_cannot_add_a_language_a_scale_lacks(study_a, client_for):
    _give(study_a, ["sus", "scs"], languages=["en"])
    coordinator = client_for("coordinator_a")

    response = _edit(
        coordinator,
        study_a,
        languages=["en", "fr"],
        companion_scale_1="sus",
        companion_scale_2="scs",
    )

    assert response.status_code == 200
    assert f"{SCS} has no published wording in French" in response.content.decode()
    study_a.refresh_from_db()
    assert study_a.languages == ["en"]


def test_an_active_study_cannot_add_a_scale_its_languages_lack(study_a, client_for):
    # No session yet, so the scales may still change; but not to one German lacks.
    response = _edit(client_for("coordinator_a"), study_a, companion_scale_1="scs")

    assert response.status_code == 200
    assert f"{SCS} has no published wording in German, French" in response.content.decode()
    study_a.refresh_from_db()
    assert study_a.companion_scales == []


def test_a_draft_may_hold_both_until_activation_checks_them(study_a, client_for):
    Study.objects.filter(pk=study_a.pk).update(status=Study.Status.DRAFT)
    coordinator = client_for("coordinator_a")

    assert _edit(coordinator, study_a, companion_scale_1="scs").status_code == 302
    _give(study_a, ["scs"], status=Study.Status.ACTIVE, languages=["en"])
    # An active study whose scales fit its languages saves its other settings.
    assert _edit(coordinator, study_a, companion_scale_1="scs", title="New").status_code == 302
    study_a.refresh_from_db()
    assert (study_a.title, study_a.companion_scales) == ("New", ["scs"])
