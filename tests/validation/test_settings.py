"""The coordinator's demographic grouping for the invariance models
(docs/design/validation-analysis.md §14.6), chosen in the study form by the question's wording."""

from django.urls import reverse

from tests.surveys.test_companion_settings import _edit


def test_the_coordinator_picks_a_demographic_grouping(study_a, client_for):
    coordinator = client_for("coordinator_a")
    form = coordinator.get(reverse("surveys:study_edit", args=[study_a.slug])).content.decode()
    assert 'name="invariance_grouping"' in form and "Gender" in form

    assert _edit(coordinator, study_a, invariance_grouping="gender").status_code == 302
    study_a.refresh_from_db()
    assert study_a.invariance_grouping == "gender"

    # A form without the field keeps it; emptied, only the languages are compared.
    assert _edit(coordinator, study_a).status_code == 302
    study_a.refresh_from_db()
    assert study_a.invariance_grouping == "gender"
    _edit(coordinator, study_a, invariance_grouping="")
    study_a.refresh_from_db()
    assert study_a.invariance_grouping == ""


def test_a_grouping_that_is_no_demographic_question_is_refused(study_a, client_for):
    response = _edit(client_for("coordinator_a"), study_a, invariance_grouping="email")
    assert response.status_code == 200
    study_a.refresh_from_db()
    assert study_a.invariance_grouping == ""
