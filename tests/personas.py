"""The personas every permission test walks through (STYLE: healthchecks' three
personas, extended to the study roles of docs/design/scope.md §1.2)."""

import pytest
from django.test import Client

from surveys.models import (
    ConsentText,
    LLMSystem,
    Participant,
    Study,
    StudyMembership,
    StudySession,
    TaskText,
    User,
)

PASSWORD = "correct-horse-battery-staple"


def make_study(slug: str, *, systems: int = 5, languages=("en", "de", "fr")) -> Study:
    study = Study.objects.create(
        title=f"Study {slug}",
        slug=slug,
        languages=list(languages),
        status=Study.Status.ACTIVE,
        random_seed=42,
    )
    for number in range(1, systems + 1):
        LLMSystem.objects.create(study=study, name=f"System {slug}-{number}", vendor="Vendor")
    # An active study has a consent text in every language it offers (surveys.readiness).
    for language in languages:
        ConsentText.objects.create(
            study=study,
            language=language,
            information_sheet=f"Information about {slug} [{language}]",
            consent_text=f"I agree to take part in {slug} [{language}].",
        )
        # And its naturalistic task, should a test switch the protocol.
        TaskText.objects.create(study=study, language=language, text=task_in(slug, language))
    return study


def task_in(slug: str, language: str) -> str:
    """The naturalistic task make_study writes for `language`."""
    return f"Plan a weekend trip with the help of the system ({slug} [{language}])."


def make_user(email: str) -> User:
    return User.objects.create_user(email=email, password=PASSWORD)


@pytest.fixture
def study_a(db):
    return make_study("study-a")


@pytest.fixture
def study_b(db):
    return make_study("study-b")


@pytest.fixture
def personas(study_a, study_b):
    """Users keyed by persona; anonymous is None."""
    coordinator_a = make_user("coord-a@example.org")
    coordinator_b = make_user("coord-b@example.org")
    experimenter_a = make_user("exp-a@example.org")
    outsider = make_user("outsider@example.org")
    StudyMembership.objects.create(
        user=coordinator_a, study=study_a, role=StudyMembership.Role.COORDINATOR
    )
    StudyMembership.objects.create(
        user=coordinator_b, study=study_b, role=StudyMembership.Role.COORDINATOR
    )
    StudyMembership.objects.create(
        user=experimenter_a, study=study_a, role=StudyMembership.Role.EXPERIMENTER
    )
    return {
        "coordinator_a": coordinator_a,
        "coordinator_b": coordinator_b,
        "experimenter_a": experimenter_a,
        "outsider": outsider,
        "anonymous": None,
    }


@pytest.fixture
def client_for(personas):
    """client_for("coordinator_a") -> a test client logged in as that persona."""

    def build(persona: str) -> Client:
        new_client = Client()
        user = personas[persona]
        if user is not None:
            new_client.force_login(user)
        return new_client

    return build


@pytest.fixture
def make_session(db, personas, study_a):
    """make_session(**fields) -> a StudySession of study A run by its experimenter."""
    counter = {"n": 0}

    def build(**fields):
        counter["n"] += 1
        systems = list(study_a.systems.all()[:2])
        values = {
            "study": study_a,
            "participant": Participant.objects.create(study=study_a),
            "experimenter": personas["experimenter_a"],
            "language": "en",
            "first_system": systems[0],
            "second_system": systems[1],
            "allocation_number": counter["n"],
        }
        values.update(fields)
        return StudySession.objects.create(**values)

    return build
