"""A session at a connected block's interaction, for the chat tests."""

from django.urls import reverse

from llm.client import Reply
from surveys.models import LLMSystem, Transcript, Turn
from tests.surveys.runner import SessionRun

# What the tests that call the services store as the system's answer.
ANSWER = Reply(
    text="An answer.",
    model="demo",
    finish_reason="stop",
    prompt_tokens=None,
    completion_tokens=None,
    first_token_ms=None,
    latency_ms=5,
)


class ChatActions:
    """The chat's forms, posted as the page posts them (by a run with `client` and `token`)."""

    def send(self, text, step="block1_interaction", **headers):
        return self.client.post(
            reverse("surveys:session_chat", args=[self.token]),
            {"step": step, "text": text},
            headers=headers,
        )

    def retry(self, step="block1_interaction"):
        return self.client.post(
            reverse("surveys:session_chat_retry", args=[self.token]), {"step": step}
        )

    def tag(self, turn, category, step="block1_interaction", **flags):
        return self.client.post(
            reverse("surveys:session_chat_tag", args=[self.token, turn.pk]),
            {"step": step, "category": category, **{flag: "on" for flag in flags}},
        )

    def untag(self, turn, step="block1_interaction"):
        return self.client.post(
            reverse("surveys:session_chat_untag", args=[self.token, turn.pk]), {"step": step}
        )

    def turns(self, block=1) -> list[Turn]:
        return list(
            Turn.objects.filter(
                transcript__interaction__session=self.session, transcript__interaction__block=block
            )
        )

    def transcript(self, block=1) -> Transcript:
        return Transcript.objects.get(interaction__session=self.session, interaction__block=block)


class ChatRun(ChatActions, SessionRun):
    """A session of study A whose block 1 system is connected to `base_url`."""

    def __init__(self, client, study, base_url: str, **system):
        super().__init__(client, study)
        self.consent()
        self.hand_back()  # the experimenter holds the device during the interaction
        fields = {"kind": LLMSystem.Kind.CONNECTED, "base_url": base_url, "model_name": "demo"}
        LLMSystem.objects.filter(pk=self.session.first_system_id).update(**{**fields, **system})

    @property
    def system(self) -> LLMSystem:
        return self.session.first_system
