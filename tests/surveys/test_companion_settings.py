"""Choosing the companion scales and the retest interval in the study form, and
the readiness check that every scale is published in the study's languages
(docs/design/validation.md §14.1)."""

import pytest
from django.urls import reverse

from surveys.models import Study
from surveys.readiness import StudyNotReady, study_readiness, study_status_change
from tests.surveys.test_studies import _study_form


def _edit(client, study, **fields):
    kept = {"title": study.title, "slug": study.slug, "languages": study.languages}
    data = _study_form(**{**kept, **fields})
    return client.post(reverse("surveys:study_edit", args=[study.slug]), data)


def test_the_coordinator_chooses_the_sus_and_a_retest(study_a, client_for):
    coordinator = client_for("coordinator_a")
    form = coordinator.get(reverse("surveys:study_edit", args=[study_a.slug])).content.decode()
    assert 'name="companion_scale_1"' in form and "System Usability Scale (SUS)" in form

    response = _edit(coordinator, study_a, companion_scale_1="sus", retest_after_days=14)

    assert response.status_code == 302
    study_a.refresh_from_db()
    assert (study_a.companion_scales, study_a.retest_after_days) == (["sus"], 14)
    # Shown again as chosen; emptied, the study gives none and has no retest.
    form = coordinator.get(reverse("surveys:study_edit", args=[study_a.slug])).content.decode()
    assert '<option value="sus" selected>' in form
    _edit(coordinator, study_a, companion_scale_1="", retest_after_days="")
    study_a.refresh_from_db()
    assert (study_a.companion_scales, study_a.retest_after_days) == ([], None)


def test_the_order_is_the_coordinators_without_gaps_or_repeats(study_a, client_for):
    # In English only: the trust scale has no German or French wording, which an
    # active study may not offer with it (tests/surveys/test_companion_languages.py).
    Study.objects.filter(pk=study_a.pk).update(languages=["en"])
    study_a.refresh_from_db()
    coordinator = client_for("coordinator_a")

    gap = _edit(coordinator, study_a, companion_scale_1="", companion_scale_2="sus")
    twice = _edit(coordinator, study_a, companion_scale_1="sus", companion_scale_2="sus")
    assert "from the first position on, without gaps" in gap.content.decode()
    assert "Choose each companion scale once" in twice.content.decode()
    study_a.refresh_from_db()
    assert study_a.companion_scales == []

    ordered = _edit(
        coordinator,
        study_a,
        companion_scale_1="trust",
        companion_scale_2="sus",
        companion_scale_3="",
    )

    assert ordered.status_code == 302
    study_a.refresh_from_db()
    assert study_a.companion_scales == ["trust", "sus"]


def test_a_form_without_the_fields_keeps_the_scales_and_the_retest(study_a, client_for):
    Study.objects.filter(pk=study_a.pk).update(companion_scales=["sus"], retest_after_days=30)

    response = _edit(client_for("coordinator_a"), study_a, title="Renamed")

    assert response.status_code == 302
    study_a.refresh_from_db()
    assert (study_a.title, study_a.companion_scales, study_a.retest_after_days) == (
        "Renamed",
        ["sus"],
        30,
    )


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"companion_scale_1": "nasa_tlx"}, "Select a valid choice"),
        ({"retest_after_days": 0}, "greater than or equal to 1"),
        ({"retest_after_days": 366}, "less than or equal to 365"),
        ({"retest_after_days": "two weeks"}, "Enter a whole number"),
    ],
)
def test_bad_choices_are_refused_and_nothing_changes(study_a, client_for, fields, message):
    response = _edit(client_for("coordinator_a"), study_a, **fields)

    assert response.status_code == 200
    assert message in response.content.decode()
    study_a.refresh_from_db()
    assert (study_a.companion_scales, study_a.retest_after_days) == ([], None)


def test_the_scales_cannot_change_once_data_is_collected(study_a, client_for, make_session):
    make_session(is_pilot=True)
    coordinator = client_for("coordinator_a")
    assert _edit(coordinator, study_a, companion_scale_1="sus").status_code == 302  # pilots only
    make_session()

    response = _edit(coordinator, study_a, companion_scale_1="")

    assert "The companion scales cannot change" in response.content.decode()
    study_a.refresh_from_db()
    assert study_a.companion_scales == ["sus"]
    # The scales left as they are is no change: other settings still save.
    assert _edit(coordinator, study_a, companion_scale_1="sus", title="New").status_code == 302


def test_a_study_offering_a_language_a_scale_lacks_is_not_ready(study_a, personas):
    # The SCS is published in English only (scoring.instruments.companions.scs).
    Study.objects.filter(pk=study_a.pk).update(
        companion_scales=["sus", "scs"], status=Study.Status.DRAFT
    )
    study_a.refresh_from_db()

    failed = [check for check in study_readiness(study_a) if not check.ok]

    assert [check.label for check in failed] == [
        "Companion scale System Causability Scale (SCS) in every language offered"
    ]
    assert "German, French" in failed[0].missing
    with pytest.raises(StudyNotReady) as refusal:
        study_status_change(study=study_a, status=Study.Status.ACTIVE)
    assert "System Causability Scale (SCS)" in str(refusal.value)
    study_a.refresh_from_db()
    assert study_a.status == Study.Status.DRAFT


def test_a_study_in_the_scales_languages_is_ready_and_the_page_says_why_not_otherwise(
    study_a, client_for
):
    Study.objects.filter(pk=study_a.pk).update(companion_scales=["sus"])  # en, de, fr
    study_a.refresh_from_db()
    assert all(check.ok for check in study_readiness(study_a))
    Study.objects.filter(pk=study_a.pk).update(companion_scales=["trust", "scs"], languages=["en"])
    study_a.refresh_from_db()
    assert all(check.ok for check in study_readiness(study_a))

    Study.objects.filter(pk=study_a.pk).update(languages=["en", "fr"], status=Study.Status.DRAFT)
    page = client_for("coordinator_a").get(reverse("surveys:study_detail", args=[study_a.slug]))

    assert page.content.decode().count("No published wording in French") == 2


def test_an_unknown_scale_key_is_named_by_the_check(study_a, personas):
    Study.objects.filter(pk=study_a.pk).update(companion_scales=["gone"], languages=["en"])
    study_a.refresh_from_db()

    failed = [check for check in study_readiness(study_a) if not check.ok]

    assert [check.label for check in failed] == ["Companion scale gone"]
