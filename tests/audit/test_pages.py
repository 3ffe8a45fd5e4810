"""The audit log's pages (docs/design/audit.md §15.4): a study's log for its
coordinators, the site's for its administrators, filtered, paged and as CSV;
404 for everyone else, as every study page answers."""

import csv
import io
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit.browse import PAGE_SIZE
from audit.log import record
from audit.models import AuditEntry
from tests.personas import make_user

Kind = AuditEntry.Kind
PERSONAS = ["coordinator_a", "coordinator_b", "experimenter_a", "outsider", "anonymous"]


@pytest.fixture
def logged(study_a, study_b, personas):
    """Two rows on study A's chain, one on B's, one on the site's."""
    coordinator = personas["coordinator_a"]
    record(Kind.EXPORT_CREATED, actor=coordinator, study_id=study_a.pk, target="export 1")
    record(Kind.ANSWER_CORRECTED, actor=coordinator, study_id=study_a.pk, target="evaluation 9")
    record(
        Kind.EXPORT_CREATED,
        actor=personas["coordinator_b"],
        study_id=study_b.pk,
        target="export 77",
    )
    record(Kind.LOGIN_FAILED, actor=None, target="intruder@example.org")


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("name", ["surveys:audit_log", "surveys:audit_log_csv"])
def test_a_studys_log_is_for_its_coordinators_only(name, persona, logged, study_a, client_for):
    response = client_for(persona).get(reverse(name, args=[study_a.slug]))

    if persona == "anonymous":
        assert response.status_code == 302
        assert response.url.startswith(reverse("account_login"))
    else:
        assert response.status_code == (200 if persona == "coordinator_a" else 404)


def test_the_page_shows_its_own_studys_rows_only(logged, study_a, client_for):
    page = client_for("coordinator_a").get(reverse("surveys:audit_log", args=[study_a.slug]))

    text = page.content.decode()
    assert "export 1" in text and "evaluation 9" in text
    assert "export 77" not in text and "intruder@example.org" not in text
    assert [entry.seq for entry in page.context["page"].object_list] == [2, 1]


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("name", ["audit:site_log", "audit:site_log_csv"])
def test_the_sites_log_is_for_site_administrators_only(name, persona, logged, client_for):
    response = client_for(persona).get(reverse(name))

    assert response.status_code == (302 if persona == "anonymous" else 404)


def test_a_site_administrator_reads_the_sites_log(logged, client):
    admin = make_user("root@example.org")
    admin.is_superuser = True
    admin.save()
    client.force_login(admin)

    page = client.get(reverse("audit:site_log"))

    text = page.content.decode()
    assert page.status_code == 200
    assert "intruder@example.org" in text and "export 1" not in text


def _rows(study, client, **query):
    page = client.get(reverse("surveys:audit_log", args=[study.slug]), query)
    assert page.status_code == 200
    return [entry.target for entry in page.context["page"].object_list]


def test_the_log_is_filtered_by_person_action_and_days(study_a, personas, client_for):
    first, second = personas["coordinator_a"], personas["experimenter_a"]
    record(Kind.EXPORT_CREATED, actor=first, study_id=study_a.pk, target="a")
    record(Kind.EXPORT_DOWNLOADED, actor=second, study_id=study_a.pk, target="b")
    record(Kind.EXPORT_CREATED, actor=second, study_id=study_a.pk, target="c")
    client = client_for("coordinator_a")
    today = timezone.localdate()

    assert _rows(study_a, client) == ["c", "b", "a"]
    assert _rows(study_a, client, person=second.pk) == ["c", "b"]
    assert _rows(study_a, client, kind="export_created") == ["c", "a"]
    assert _rows(study_a, client, person=second.pk, kind="export_created") == ["c"]
    assert _rows(study_a, client, since=today.isoformat(), until=today.isoformat()) == [
        "c",
        "b",
        "a",
    ]
    assert _rows(study_a, client, until=(today - timedelta(days=1)).isoformat()) == []
    assert _rows(study_a, client, since=(today + timedelta(days=1)).isoformat()) == []


def test_a_wrong_filter_shows_no_rows_and_says_why(study_a, personas, client_for):
    record(Kind.EXPORT_CREATED, actor=personas["coordinator_a"], study_id=study_a.pk, target="a")
    client = client_for("coordinator_a")
    today = timezone.localdate()

    for query in (
        {"since": today.isoformat(), "until": (today - timedelta(days=1)).isoformat()},
        {"kind": "no_such_kind"},
        {"person": "abc"},
        {"since": "yesterday"},
    ):
        page = client.get(reverse("surveys:audit_log", args=[study_a.slug]), query)
        assert page.status_code == 200
        assert list(page.context["page"].object_list) == []
        assert page.context["form"].errors, query


def test_the_person_filter_offers_those_who_acted_in_this_study(
    logged, study_a, personas, client_for
):
    page = client_for("coordinator_a").get(reverse("surveys:audit_log", args=[study_a.slug]))

    choices = list(page.context["form"].fields["person"].choices)
    assert choices[1:] == [(personas["coordinator_a"].pk, "coord-a@example.org")]


def test_the_log_is_paged_newest_first(study_a, personas, client_for):
    for number in range(PAGE_SIZE + 3):
        record(
            Kind.EXPORT_CREATED,
            actor=personas["coordinator_a"],
            study_id=study_a.pk,
            target=f"export {number}",
        )
    client = client_for("coordinator_a")

    first = _rows(study_a, client, kind="export_created")
    second = _rows(study_a, client, kind="export_created", page=2)

    assert len(first) == PAGE_SIZE and first[0] == f"export {PAGE_SIZE + 2}"
    assert second == ["export 2", "export 1", "export 0"]
    page = client.get(reverse("surveys:audit_log", args=[study_a.slug]), {"kind": "export_created"})
    assert "?kind=export_created&amp;page=2" in page.content.decode()
    # The CSV link keeps the filter, not the page.
    csv_url = reverse("surveys:audit_log_csv", args=[study_a.slug])
    assert f'href="{csv_url}?kind=export_created"' in page.content.decode()


def test_the_csv_holds_the_filtered_rows_and_runs_no_formula(study_a, personas, client_for):
    coordinator = personas["coordinator_a"]
    record(Kind.EXPORT_CREATED, actor=coordinator, study_id=study_a.pk, target="=HYPERLINK(1)",
           details={"format": "csv"})  # fmt: skip
    record(Kind.ANSWER_CORRECTED, actor=coordinator, study_id=study_a.pk, target="evaluation 3")
    url = reverse("surveys:audit_log_csv", args=[study_a.slug])

    response = client_for("coordinator_a").get(url, {"kind": "export_created"})

    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith(
        f'attachment; filename="{study_a.slug}-audit-'
    )
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == [
        "seq",
        "time",
        "person_id",
        "person",
        "action",
        "on",
        "details",
        "previous_hash",
        "hash",
    ]
    entry = AuditEntry.objects.get(kind="export_created")
    assert rows[1:] == [
        ["1", rows[1][1], str(coordinator.pk), "coord-a@example.org", "export_created",
         "'=HYPERLINK(1)", '{"format": "csv"}', entry.previous_hash, entry.hash],
    ]  # fmt: skip


def test_the_page_costs_the_same_queries_for_one_row_or_a_page_full(study_a, personas, client_for):
    client = client_for("coordinator_a")
    url = reverse("surveys:audit_log", args=[study_a.slug])

    def queries_with(rows: int) -> int:
        for number in range(rows - AuditEntry.objects.filter(study_id=study_a.pk).count()):
            record(
                Kind.EXPORT_CREATED,
                actor=make_user(f"u{number}-{rows}@example.org"),
                study_id=study_a.pk,
            )
        with CaptureQueriesContext(connection) as context:
            assert client.get(url).status_code == 200
        return len(context.captured_queries)

    assert queries_with(1) == queries_with(PAGE_SIZE + 10)


def test_the_study_page_links_the_log_for_coordinators(study_a, client_for):
    url = reverse("surveys:audit_log", args=[study_a.slug])
    detail = reverse("surveys:study_detail", args=[study_a.slug])

    assert url in client_for("coordinator_a").get(detail).content.decode()
    assert url not in client_for("experimenter_a").get(detail).content.decode()
