"""Eligibility screening (docs/design/instrument.md §3.1, paper 6.4). Answers are not stored: an
ineligible person is thanked and stopped, and only a count is kept.

The criteria are the paper's. Only the languages of the fluency question
follow the study: the paper asked "fluent in German or English" because its
study ran in those two; a study offering French asks about its own languages
(eligibility_criteria).
"""

from collections.abc import Iterable
from dataclasses import dataclass, replace

from scoring.instruments.common import Option, Text, Worded

YES_NO = (
    Option(1, {"en": "Yes", "de": "Ja", "fr": "Oui"}),
    Option(0, {"en": "No", "de": "Nein", "fr": "Non"}),
)


@dataclass(frozen=True)
class Criterion(Worded):
    key: str
    text: Text
    eligible_answer: bool  # the answer an eligible person gives


ELIGIBILITY: tuple[Criterion, ...] = (
    Criterion(
        "adult",
        {
            "en": "Are you 18 years of age or older?",
            "de": "Sind Sie 18 Jahre oder älter?",
            "fr": "Avez-vous 18 ans ou plus ?",
        },
        True,
    ),
    Criterion(
        "fluent",
        {
            "en": "Are you fluent in German or English?",
            "de": "Sprechen Sie fließend Deutsch oder Englisch?",
            "fr": "Parlez-vous couramment l'allemand ou l'anglais ?",
        },
        True,
    ),
    Criterion(
        "ai_professional",
        {
            "en": "Do you have professional experience in AI/ML development?",
            "de": "Haben Sie berufliche Erfahrung in der Entwicklung von KI/ML?",
            "fr": "Avez-vous une expérience professionnelle en développement d'IA/ML ?",
        },
        False,
    ),
    Criterion(
        "earlier_shs_study",
        {
            "en": "Have you taken part in an earlier SHS validation study?",
            "de": "Haben Sie bereits an einer früheren SHS-Validierungsstudie teilgenommen?",
            "fr": "Avez-vous déjà participé à une étude de validation de la SHS ?",
        },
        False,
    ),
    Criterion(
        "llm_company",
        {
            "en": "Do you work at a company that develops LLM products?",
            "de": "Arbeiten Sie bei einem Unternehmen, das LLM-Produkte entwickelt?",
            "fr": "Travaillez-vous dans une entreprise qui développe des produits LLM ?",
        },
        False,
    ),
)
ELIGIBILITY_BY_KEY = {criterion.key: criterion for criterion in ELIGIBILITY}


# The paper's study was offered in German and English.
PAPER_LANGUAGES = ("de", "en")

# Names of the languages a fluency question can name, in each language the
# question is asked in (French with its article: "l'allemand", "le français").
# Listed in the order the question names them: the paper's "German or English".
LANGUAGE_NAMES: dict[str, Text] = {
    "de": {"en": "German", "de": "Deutsch", "fr": "l'allemand"},
    "en": {"en": "English", "de": "Englisch", "fr": "l'anglais"},
    "fr": {"en": "French", "de": "Französisch", "fr": "le français"},
}
_OR = {"en": "or", "de": "oder", "fr": "ou"}
_FLUENCY_QUESTION = {
    "en": "Are you fluent in {languages}?",
    "de": "Sprechen Sie fließend {languages}?",
    "fr": "Parlez-vous couramment {languages} ?",
}


def _named(languages: list[str], asked_in: str) -> str:
    names = [LANGUAGE_NAMES[code][asked_in] for code in languages]
    if len(names) == 1:
        return names[0]
    return f"{', '.join(names[:-1])} {_OR[asked_in]} {names[-1]}"


def fluency_criterion(languages: Iterable[str]) -> Criterion:
    """The fluency question naming `languages` (codes of LANGUAGE_NAMES)."""
    chosen = set(languages)
    unknown = chosen - LANGUAGE_NAMES.keys()
    if unknown or not chosen:
        raise ValueError(f"no fluency question for languages {sorted(unknown) or '(none)'}")
    ordered = [code for code in LANGUAGE_NAMES if code in chosen]
    text = {
        asked_in: question.format(languages=_named(ordered, asked_in))
        for asked_in, question in _FLUENCY_QUESTION.items()
    }
    return replace(ELIGIBILITY_BY_KEY["fluent"], text=text)


def eligibility_criteria(
    fluency_languages: Iterable[str] = PAPER_LANGUAGES,
) -> tuple[Criterion, ...]:
    """The paper's criteria, the fluency question naming `fluency_languages`."""
    fluency = fluency_criterion(fluency_languages)
    return tuple(fluency if c.key == "fluent" else c for c in ELIGIBILITY)


def is_eligible(answers: dict[str, bool]) -> bool:
    return all(answers.get(c.key) is c.eligible_answer for c in ELIGIBILITY)
