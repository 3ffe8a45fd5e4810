"""Eligibility screening (SPEC 2.4, paper 6.4). Answers are not stored: an
ineligible person is thanked and stopped, and only a count is kept."""

from dataclasses import dataclass

from scoring.instruments.common import Option, Text, translated

YES_NO = (
    Option(1, {"en": "Yes", "de": "Ja", "fr": "Oui"}),
    Option(0, {"en": "No", "de": "Nein", "fr": "Non"}),
)


@dataclass(frozen=True)
class Criterion:
    key: str
    text: Text
    eligible_answer: bool  # the answer an eligible person gives

    def text_in(self, language: str) -> str:
        return translated(self.text, language)


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


def is_eligible(answers: dict[str, bool]) -> bool:
    return all(answers.get(c.key) is c.eligible_answer for c in ELIGIBILITY)
