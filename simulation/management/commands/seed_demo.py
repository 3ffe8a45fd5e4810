"""A demo study as in the SHS paper: the five systems of Table 3, three languages,
a coordinator, an experimenter and simulated completed sessions (the default
answer model, with its participant and system effects: docs/design/command-line.md §9.6),
so that the monitor, the report and the exports show something on first login.
A sixth system, the demo model, is connected to the shipped demo server
(llm/demo_server.py, started by `make run`), so the built-in chat works with
no key and no internet. Idempotent: a second run changes nothing but the
demo model's address, which follows the port the demo server was given."""

import datetime
import os

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from shs_platform.celery import app
from surveys.models import ConsentText, LLMSystem, Study, StudyMembership, User
from surveys.simulation import simulate_study

DEMO_SLUG = "shs-demo"
COORDINATOR = ("coordinator@example.org", "demo-coordinator-pass")
EXPERIMENTER = ("experimenter@example.org", "demo-experimenter-pass")

# Simulated participants of a new demo study (two evaluations each).
DEMO_PARTICIPANTS = 12
DEMO_SEED = 193
WINDOW = (datetime.date(2025, 10, 1), datetime.date(2025, 11, 30))  # "Oct–Nov 2025"
SYSTEMS = [
    # name, vendor, model/version, access mode, URL (paper Table 3)
    ("ChatGPT", "OpenAI", "GPT-4-based", "Free-tier web interface", "https://chatgpt.com/"),
    (
        "Claude",
        "Anthropic",
        "Claude 3 Sonnet",
        "Free-tier web interface (Claude.ai)",
        "https://claude.ai/",
    ),
    ("Gemini", "Google", "", "Free-tier web interface", "https://gemini.google.com/"),
    ("Mistral", "Mistral AI", "", "Public inference platform", "https://chat.mistral.ai/"),
    ("DeepSeek", "DeepSeek AI", "", "Public inference platform", "https://chat.deepseek.com/"),
]
# The connected demo system (docs/design/transcripts.md §10.5). Added after the simulated
# sessions, so it is the least used system and the next session gets it.
DEMO_MODEL = {
    "name": "Demo model",
    "vendor": "SHS study platform",
    "model_version": "demo server (not a real LLM)",
    "access_mode": "Built-in chat",
    "kind": LLMSystem.Kind.CONNECTED,
    "model_name": "shs-demo",
    "system_prompt": "You are the demo model of the SHS study platform.",
    "is_demo": True,
}
DEMO_LLM_URL = "http://127.0.0.1:8001/v1"
CONSENT = {
    "en": (
        "You are invited to take part in a study of how people perceive the reliability of "
        "AI chat systems. You will chat with two systems for about 15 minutes each and answer "
        "ten short questions after each. The session takes about 50 minutes. We record no name, "
        "e-mail or other identifier. You may withdraw at any time without giving a reason; your "
        "answers are then deleted.",
        "I have read the information sheet and agree to take part.",
    ),
    "de": (
        "Sie sind eingeladen, an einer Studie darüber teilzunehmen, wie Menschen die "
        "Zuverlässigkeit von KI-Chatsystemen wahrnehmen. Sie chatten mit zwei Systemen je etwa "
        "15 Minuten und beantworten danach jeweils zehn kurze Fragen. Die Sitzung dauert etwa "
        "50 Minuten. Wir erfassen keinen Namen, keine E-Mail-Adresse und keine andere Kennung. "
        "Sie können jederzeit ohne Angabe von Gründen zurücktreten; Ihre Antworten werden dann "
        "gelöscht.",
        "Ich habe die Information gelesen und bin mit der Teilnahme einverstanden.",
    ),
    "fr": (
        "Vous êtes invité·e à participer à une étude sur la manière dont les personnes perçoivent "
        "la fiabilité des systèmes de chat à base d'IA. Vous discuterez avec deux systèmes pendant "
        "environ 15 minutes chacun et répondrez ensuite à dix courtes questions. La séance dure "
        "environ 50 minutes. Nous n'enregistrons ni nom, ni adresse e-mail, ni autre identifiant. "
        "Vous pouvez vous retirer à tout moment sans justification ; vos réponses sont alors "
        "supprimées.",
        "J'ai lu la notice d'information et j'accepte de participer.",
    ),
}


class Command(BaseCommand):
    help = "Create the demo study with the five systems of the SHS paper (Table 3)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--force", action="store_true", help="run even when DEBUG is off (known passwords!)"
        )

    def handle(self, *args, force: bool = False, **options):
        if not settings.DEBUG and not force:
            raise CommandError(
                "seed_demo creates accounts with published passwords; it refuses to run with "
                "DEBUG off. Use --force if you really want demo data here."
            )
        # The simulated sessions are scored here and now, whether or not a worker listens.
        eager, app.conf.task_always_eager = app.conf.task_always_eager, True
        try:
            with transaction.atomic():
                created = self._seed()
                simulated = self._simulate()
                self._connect_demo_model()
        finally:
            app.conf.task_always_eager = eager
        if created:
            self.stdout.write(self.style.SUCCESS("Demo study created."))
        elif not simulated:
            self.stdout.write("Demo study already present; nothing changed.")
        if simulated:
            self.stdout.write(f"  {simulated} simulated participants completed their sessions.")
        self.stdout.write(f"  study:        /studies/{DEMO_SLUG}/")
        self.stdout.write(f"  coordinator:  {COORDINATOR[0]} / {COORDINATOR[1]}")
        self.stdout.write(f"  experimenter: {EXPERIMENTER[0]} / {EXPERIMENTER[1]}")

    def _simulate(self) -> int:
        """Completed sessions for a demo study that has none yet (so not twice)."""
        study = Study.objects.get(slug=DEMO_SLUG)
        if study.sessions.exists():
            return 0
        simulate_study(study=study, participants=DEMO_PARTICIPANTS, seed=DEMO_SEED)
        return DEMO_PARTICIPANTS

    def _connect_demo_model(self) -> None:
        url = os.environ.get("DEMO_LLM_URL") or DEMO_LLM_URL
        study = Study.objects.get(slug=DEMO_SLUG)
        system, created = LLMSystem.objects.get_or_create(
            study=study, name=DEMO_MODEL["name"], defaults={**DEMO_MODEL, "base_url": url}
        )
        if created:
            self.stdout.write(f"  demo model:   connected to {url} (make run starts it)")
        elif system.base_url != url:
            system.base_url = url
            system.save(update_fields=["base_url"])

    def _seed(self) -> bool:
        study, created = Study.objects.get_or_create(
            slug=DEMO_SLUG,
            defaults={
                "title": "SHS demo study",
                "description": "Demo of a supervised SHS validation study (paper section 6).",
                "languages": ["de", "en", "fr"],
                "status": Study.Status.ACTIVE,
                "random_seed": 193,
            },
        )
        if not created:
            return False
        for name, vendor, version, mode, url in SYSTEMS:
            LLMSystem.objects.create(
                study=study,
                name=name,
                vendor=vendor,
                model_version=version,
                access_mode=mode,
                access_url=url,
                collection_start=WINDOW[0],
                collection_end=WINDOW[1],
            )
        for language, (sheet, statement) in CONSENT.items():
            ConsentText.objects.create(
                study=study, language=language, information_sheet=sheet, consent_text=statement
            )
        for (email, password), role in (
            (COORDINATOR, StudyMembership.Role.COORDINATOR),
            (EXPERIMENTER, StudyMembership.Role.EXPERIMENTER),
        ):
            user = User.objects.filter(email=email).first()
            if user is None:
                user = User.objects.create_user(email=email, password=password)
            StudyMembership.objects.get_or_create(user=user, study=study, defaults={"role": role})
        return True
