"""The remote study page for coordinators (docs/design/remote.md §11.6): the public link,
the link to paste into each common panel, built from the parameter the public link
reads, and the completion URL; no box to run a supervised session."""

import html
import re
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import reverse

from surveys.models import PanelEntry, Study, StudyMembership
from surveys.panel import PANELS, panel_links
from tests.surveys.remote import take_url

PROLIFIC_ID = "5f3a9c2e1b7d4e6fa0c8b912"
WORKER_ID = "A2B3C4D5E6F7G8"
COMPLETION = "https://app.prolific.com/submissions/complete?cc={code}"


@pytest.fixture
def study(remote_study, personas):
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=remote_study, role="coordinator"
    )
    return remote_study


def set_fields(study, **fields) -> Study:
    Study.objects.filter(pk=study.pk).update(**fields)
    study.refresh_from_db()
    return study


def study_page(client_for, study) -> str:
    response = client_for("coordinator_a").get(reverse("surveys:study_detail", args=[study.slug]))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def copy_fields(page: str) -> dict[str, str]:
    """Each read-only link field of the page: its id -> its value."""
    fields = re.findall(
        r'<input type="text" id="([\w-]+)" class="public-link" value="([^"]*)"', page
    )
    return dict(fields)


def public_link(study) -> str:
    return f"http://testserver{take_url(study)}"


def test_prolific_gets_its_documented_link_and_the_public_link_is_there_to_copy(study, client_for):
    set_fields(study, panel_parameter="PROLIFIC_PID")

    fields = copy_fields(study_page(client_for, study))

    assert fields["public-link"] == public_link(study)
    assert fields["panel-link-PROLIFIC_PID"] == (
        f"{public_link(study)}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert fields["panel-link-pid"] == f"{public_link(study)}?PROLIFIC_PID="


def test_a_panel_that_appends_its_own_parameter_is_told_which_name_to_set(study, client_for):
    set_fields(study, panel_parameter="PROLIFIC_PID")
    page = study_page(client_for, study)
    assert "panel-link-workerId" not in copy_fields(page)
    assert "set the panel id parameter to <code>workerId</code>" in page

    set_fields(study, panel_parameter="workerId")
    fields = copy_fields(study_page(client_for, study))

    # MTurk and CloudResearch add ?workerId=... themselves: the plain link is pasted.
    assert fields["panel-link-workerId"] == public_link(study)
    assert fields["panel-link-PROLIFIC_PID"].startswith(
        f"{public_link(study)}?workerId={{{{%PROLIFIC_PID%}}}}&"
    )


def _as_the_panel_sends_it(link: str, parameter: str) -> tuple[str, str]:
    """The URL a participant arrives with (the panel's placeholders filled in, or
    its parameters appended, as each panel documents) and the id it carries."""
    if link.endswith("="):  # another panel: its own notation after the "="
        return link + PROLIFIC_ID, PROLIFIC_ID
    if "{{%" in link:
        filled = link.replace("{{%PROLIFIC_PID%}}", PROLIFIC_ID)
        filled = filled.replace("{{%STUDY_ID%}}", "s1").replace("{{%SESSION_ID%}}", "x1")
        return filled, PROLIFIC_ID
    return f"{link}?{quote(parameter)}={WORKER_ID}&assignmentId=3A1B&hitId=3Z9Y", WORKER_ID


@pytest.mark.parametrize("parameter", ["PROLIFIC_PID", "workerId", "pid"])
def test_every_pasted_link_brings_the_id_to_the_public_link(study, parameter):
    set_fields(study, panel_parameter=parameter)
    pasted = [link.url for link in panel_links(study, public_link(study)) if link.url]
    assert pasted
    for url in pasted:
        arrived, panel_id = _as_the_panel_sends_it(url, parameter)
        participant = Client()
        page = participant.get(arrived.removeprefix("http://testserver")).content.decode()
        carried = re.search(r'name="panel_id" value="([^"]+)"', page)[1]

        start = {"action": "start", "language": "en", "panel_id": carried}
        assert participant.post(take_url(study), start).status_code == 302

        assert carried == panel_id, url
        PanelEntry.objects.get(study=study, panel_id=panel_id).delete()


def test_each_common_panel_has_a_link(study):
    set_fields(study, panel_parameter="pid")

    links = panel_links(study, public_link(study))

    assert [link.panel for link in links] == list(PANELS)
    assert {panel.parameter for panel in PANELS} == {"PROLIFIC_PID", "workerId", "pid"}


def test_without_a_panel_parameter_the_page_says_how_to_keep_panel_ids(study, client_for):
    page = study_page(client_for, study)

    assert "Panel ids are not kept" in page
    assert list(copy_fields(page)) == ["public-link"]
    assert reverse("surveys:study_edit", args=[study.slug]) in page


def test_the_completion_url_is_shown_to_copy_or_its_absence_explained(study, client_for):
    assert "No completion URL is set" in study_page(client_for, study)

    set_fields(study, completion_url=COMPLETION)

    assert copy_fields(study_page(client_for, study))["completion-url"] == COMPLETION


def test_a_remote_study_has_no_box_to_run_a_session(study, study_a, client_for):
    remote = study_page(client_for, study)
    supervised = client_for("coordinator_a").get(
        reverse("surveys:study_detail", args=[study_a.slug])
    )

    assert "Run a session" not in remote
    assert reverse("surveys:session_start", args=[study.slug]) not in remote
    assert "Run a session" in supervised.content.decode()
