"""A remote study and a participant taking it from its public link, with the
test client, as a participant's browser does (docs/design/remote.md §11)."""

from django.test import Client
from django.urls import reverse

from surveys.models import LLMSystem, Study, StudySession, Turn
from tests.personas import make_study
from tests.surveys.chat import ChatActions
from tests.surveys.runner import SessionRun


def make_remote_study(base_url: str, slug: str = "remote", **fields) -> Study:
    """An active remote study whose two systems are the demo server; one prompt
    of each category per block, so that a whole session costs four answers."""
    study = make_study(slug, systems=2)
    study.systems.update(kind=LLMSystem.Kind.CONNECTED, base_url=base_url, model_name="demo")
    values = {"mode": Study.Mode.REMOTE, "min_verified_prompts": 1, "min_glatteis_prompts": 1}
    Study.objects.filter(pk=study.pk).update(**{**values, **fields})
    study.refresh_from_db()
    return study


def take_url(study: Study) -> str:
    return reverse("surveys:remote_take", args=[study.public_code])


class RemoteRun(ChatActions, SessionRun):
    """A participant who starts a session from the study's public link."""

    def __init__(self, study, language="en", client=None):
        self.client = client or Client()
        self.study = study
        response = self.client.post(take_url(study), {"action": "start", "language": language})
        assert response.status_code == 302, response.content.decode()[:2000]
        self.url = response.url
        self.token = self.url.rstrip("/").rsplit("/", 1)[-1]

    def chat_block(self, block, categories=("verified", "glatteis"), reason=""):
        """A message per category, each answered by the system and tagged; then finish."""
        step = f"block{block}_interaction"
        for number, category in enumerate(categories, start=1):
            assert self.send(f"Question {number} of block {block}?", step).status_code == 302
            turn = [t for t in self.turns(block) if t.role == Turn.Role.USER][-1]
            assert self.tag(turn, category, step).status_code == 302
        return self.post(step, override_reason=reason)

    def complete(self):
        for response in (
            self.consent(),
            self.chat_block(1),
            self.shs(1),
            self.chat_block(2),
            self.shs(2),
            self.demographics(),
        ):
            assert response.status_code == 302, response.content.decode()[:2000]
        return self.session


def sessions_of(study: Study):
    return StudySession.objects.filter(study=study)
