"""The retest wave as a participant meets it (docs/design/validation.md §14.2): the link
on the page closing their session, and the retest pages, driven with the
test client as a browser does."""

import re
from datetime import timedelta

from django.test import Client
from django.utils import timezone

from surveys.models import Retest, Study
from tests.surveys.runner import answers

RETEST_PATH = re.compile(r"https?://[^/\s\"<]+(/retest/([A-Za-z0-9_-]+)/)")


def with_retest(study: Study, days: int = 14) -> Study:
    Study.objects.filter(pk=study.pk).update(retest_after_days=days)
    study.refresh_from_db()
    return study


def link_on(page) -> tuple[str, str]:
    """(path, token) of the retest link a page shows; fails when it shows none."""
    match = RETEST_PATH.search(page.content.decode())
    assert match, "no retest link on the page"
    return match.group(1), match.group(2)


def make_due(retest: Retest | None = None) -> None:
    """The days have passed (the due time moved back rather than the clock on)."""
    retests = Retest.objects.filter(pk=retest.pk) if retest else Retest.objects.all()
    retests.update(due_at=timezone.now() - timedelta(minutes=1))


class RetestVisit:
    """The participant opening their retest link (or staff the retest page)."""

    def __init__(self, url: str, client: Client | None = None):
        self.url = url
        self.client = client or Client()

    def get(self):
        return self.client.get(self.url)

    def post(self, step: str, **data):
        return self.client.post(self.url, {"step": step, **data})

    def shs(self, block: int, values=None):
        self.get()  # first display
        return self.post(f"block{block}_shs", **answers(*(values or ())))

    def complete(self, block1=None, block2=None):
        for block, values in ((1, block1), (2, block2)):
            response = self.shs(block, values)
            assert response.status_code == 302, response.content.decode()[:2000]
