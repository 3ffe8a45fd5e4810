"""Drives one session through the protocol with the test client, step by step,
the way the experimenter and the participant do in the browser."""

from django.urls import reverse

from scoring.instruments.eligibility import ELIGIBILITY
from surveys.models import ConsentText, StudySession

ELIGIBLE = {c.key: "1" if c.eligible_answer else "0" for c in ELIGIBILITY}
NEUTRAL_FEEDBACK = {
    "clarity": "1",
    "relevance": "2",
    "response_options": "1",
    "explanation_needed": "1",
    "demographics_length": "1",
}
DEMOGRAPHICS = {
    "age_band": "2",
    "gender": "9",
    "education": "4",
    "first_language": "1",
    "llm_use": "4",
}


def answers(*values) -> dict[str, str]:
    values = values or (2, -2, 1, -1, 0, 0, 1, -2, 2, -1)
    return {f"q{i}": str(v) for i, v in enumerate(values, start=1)}


class SessionRun:
    def __init__(self, client, study, language="en", is_pilot=False):
        self.client = client
        self.study = study
        data = {"language": language}
        if is_pilot:
            data["is_pilot"] = "on"
        response = client.post(reverse("surveys:session_start", args=[study.slug]), data)
        assert response.status_code == 302, response.content
        self.url = response.url
        self.token = self.url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def session(self) -> StudySession:
        return StudySession.objects.get(token=self.token)

    def get(self):
        return self.client.get(self.url)

    def post(self, step, **data):
        return self.client.post(self.url, {"step": step, **data})

    def consent(self, **overrides):
        # The consent page posts back which text it showed (ConsentText.fingerprint).
        text = ConsentText.current(self.study.pk, self.session.language)
        shown = {"shown_text": text.fingerprint} if text else {}
        return self.post("consent", **{**ELIGIBLE, "consent": "on", **shown, **overrides})

    def log_prompt(self, step, category, **flags):
        return self.client.post(
            reverse("surveys:session_prompt_add", args=[self.token]),
            {"step": step, "category": category, **flags},
        )

    def interaction(self, block, verified=3, glatteis=3, reason=""):
        step = f"block{block}_interaction"
        for _ in range(verified):
            assert self.log_prompt(step, "verified").status_code == 302
        for _ in range(glatteis):
            assert self.log_prompt(step, "glatteis", is_source_request="on").status_code == 302
        return self.post(step, override_reason=reason)

    def shs(self, block, values=None):
        self.get()  # first display
        return self.post(f"block{block}_shs", **(values or answers()))

    def feedback(self, **overrides):
        return self.post("feedback", **{**NEUTRAL_FEEDBACK, **overrides})

    def demographics(self, **overrides):
        return self.post("demographics", **{**DEMOGRAPHICS, **overrides})

    def hand_back(self):
        """The experimenter takes the device back and continues."""
        return self.post("handback")

    def complete(self, block1=None, block2=None):
        for response in (
            self.consent(),
            self.interaction(1),
            self.shs(1, block1),
            self.interaction(2),
            self.shs(2, block2),
            self.demographics(),
            self.feedback(),
        ):
            assert response.status_code == 302, response.content.decode()[:2000]
        return self.session

    def advance_to(self, step):
        """Run the protocol up to (not through) `step`."""
        actions = [
            ("consent", self.consent),
            ("block1_interaction", lambda: self.interaction(1)),
            ("block1_shs", lambda: self.shs(1)),
            ("block2_interaction", lambda: self.interaction(2)),
            ("block2_shs", lambda: self.shs(2)),
            ("demographics", self.demographics),
            ("feedback", self.feedback),
        ]
        for name, action in actions:
            if name == step:
                return
            assert action().status_code == 302
