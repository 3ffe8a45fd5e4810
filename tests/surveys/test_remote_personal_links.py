"""Single-use personal links for closed panels: a coordinator makes N at once
and downloads them as CSV; each starts at most one session
(docs/design/remote.md §11.4)."""

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse

from surveys.models import PersonalLink, Study, StudyMembership
from tests.surveys.remote import make_remote_study


@pytest.fixture
def study(db, personas):
    study = make_remote_study("http://127.0.0.1:9/v1")
    StudyMembership.objects.create(
        user=personas["coordinator_a"], study=study, role=StudyMembership.Role.COORDINATOR
    )
    StudyMembership.objects.create(
        user=personas["experimenter_a"], study=study, role=StudyMembership.Role.EXPERIMENTER
    )
    return study


def make_links(client, study, count):
    return client.post(reverse("surveys:personal_links", args=[study.slug]), {"count": count})


def links_of(response) -> list[str]:
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["link"]
    return [row[0] for row in rows[1:]]


def path_of(link: str) -> str:
    return link.removeprefix("http://testserver")


def start(client, link):
    return client.post(path_of(link), {"action": "start", "language": "en"})


def test_a_coordinator_downloads_n_distinct_links_stored_only_hashed(study, client_for):
    response = make_links(client_for("coordinator_a"), study, 25)

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    assert "attachment" in response["Content-Disposition"]
    links = links_of(response)
    assert len(set(links)) == 25
    assert all(f"/take/{study.public_code}/p/" in link for link in links)
    stored = set(PersonalLink.objects.filter(study=study).values_list("token_hash", flat=True))
    tokens = {link.rstrip("/").rsplit("/", 1)[-1] for link in links}
    assert len(stored) == 25 and not stored & tokens


def test_each_link_starts_one_session_only(study, client_for):
    (link,) = links_of(make_links(client_for("coordinator_a"), study, 1))

    first = start(Client(), link)
    again = start(Client(), link)  # the link forwarded to someone else

    assert first.status_code == 302
    assert again.status_code == 410
    assert "has been used already" in again.content.decode()
    assert study.sessions.count() == 1
    used = PersonalLink.objects.get(study=study)
    assert used.used_at and used.session == study.sessions.get()


def test_a_used_link_still_resumes_by_cookie_and_by_code(study, client_for):
    (link,) = links_of(make_links(client_for("coordinator_a"), study, 1))
    device = Client()
    session_url = start(device, link).url
    code = study.sessions.get().participant.code

    assert device.get(path_of(link)).url == session_url
    other = Client().post(path_of(link), {"action": "resume", "code": code})
    assert other.status_code == 302 and other.url == session_url


def test_an_unknown_link_is_404(study):
    url = reverse("surveys:remote_take_personal", args=[study.public_code, "x" * 32])
    assert Client().get(url).status_code == 404


@pytest.mark.parametrize("persona", ["experimenter_a", "coordinator_b", "anonymous"])
def test_only_the_studys_coordinators_make_links(persona, study, client_for):
    response = make_links(client_for(persona), study, 3)

    assert response.status_code in (302, 404)
    assert not PersonalLink.objects.exists()


@pytest.mark.parametrize("count", [0, 5001, "many"])
def test_a_bad_count_makes_no_links(count, study, client_for):
    response = make_links(client_for("coordinator_a"), study, count)

    assert response.status_code == 302
    assert not PersonalLink.objects.exists()


def test_a_supervised_study_makes_no_links(study, client_for):
    Study.objects.filter(pk=study.pk).update(mode=Study.Mode.SUPERVISED)

    assert make_links(client_for("coordinator_a"), study, 3).status_code == 302
    assert not PersonalLink.objects.exists()


def test_the_study_page_counts_links_made_and_used(study, client_for):
    coordinator = client_for("coordinator_a")
    links = links_of(make_links(coordinator, study, 3))
    start(Client(), links[0])

    page = coordinator.get(reverse("surveys:study_detail", args=[study.slug])).content.decode()

    assert "3 personal links made, 1 used" in page
