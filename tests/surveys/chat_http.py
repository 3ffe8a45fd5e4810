"""Fixtures of the chat tests over real HTTP: the web process (tests/web_stack.py)
in each way it is served, the conformance LLM server (tests/llm_quirks.py), and
a remote participant at block 1's chat whose system is one of its quirks."""

from __future__ import annotations

import itertools

import pytest

from surveys.models import LLMSystem, StudySession, Turn
from tests.surveys.remote import make_remote_study
from tests.web_stack import remote_participant, running_web

_slugs = itertools.count()


def web_fixture(*kinds: str):
    """A module-scoped fixture `web`: the web process, once per kind."""

    @pytest.fixture(scope="module", params=kinds)
    def web(request, django_db_setup, tmp_path_factory, quirks):
        env = request.module.__dict__.get("WEB_ENV", {})
        with running_web(request.param, tmp_path_factory.mktemp("web"), env) as stack:
            yield stack

    return web


class ChatSession:
    """A remote participant over HTTP at block 1, chatting with a quirk's system."""

    def __init__(self, web, quirks, quirk: str, **system):
        self.web, self.quirks = web, quirks
        self.study = make_remote_study(quirks.url(quirk), slug=f"http-{next(_slugs)}")
        if system:
            self.study.systems.update(**system)
        self.browser, self.url = remote_participant(web.base, self.study.public_code)
        self.token = self.url.rstrip("/").rsplit("/", 1)[-1]
        self.session = StudySession.objects.get(token=self.token)
        quirks.reset()

    @property
    def system(self) -> LLMSystem:
        return LLMSystem.objects.get(pk=self.session.first_system_id)

    def use(self, quirk: str, **fields) -> None:
        """The coordinator points the block's system elsewhere (or changes it)."""
        LLMSystem.objects.filter(pk=self.session.first_system_id).update(
            base_url=self.quirks.url(quirk), **fields
        )

    def send(self, text: str | None, **kwargs):
        return self.browser.chat(self.url, text, **kwargs)

    def turns(self) -> list[Turn]:
        return list(
            Turn.objects.filter(
                transcript__interaction__session=self.session, transcript__interaction__block=1
            ).order_by("position")
        )

    def last(self) -> Turn:
        return self.turns()[-1]


def ended_with(lines: list[dict]) -> dict:
    assert lines, "no JSON line came back"
    return lines[-1]
