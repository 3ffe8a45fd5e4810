"""Demographics (docs/design/instrument.md §3.3), about two minutes. Every question offers
"prefer not to say", always coded 9 so analysts can treat it as missing."""

from scoring.instruments.common import Option, Question, Questionnaire, Text

PREFER_NOT_TO_SAY_CODE = 9
PREFER_NOT_TO_SAY = Option(
    PREFER_NOT_TO_SAY_CODE,
    {"en": "Prefer not to say", "de": "Keine Angabe", "fr": "Je préfère ne pas répondre"},
)


def _options(*labels: Text) -> tuple[Option, ...]:
    return tuple(Option(code, label) for code, label in enumerate(labels, start=1)) + (
        PREFER_NOT_TO_SAY,
    )


DEMOGRAPHICS = Questionnaire(
    key="demographics",
    version="demographics-1.0",
    title={"en": "About you", "de": "Angaben zur Person", "fr": "À propos de vous"},
    questions=(
        Question(
            "age_band",
            {"en": "Your age", "de": "Ihr Alter", "fr": "Votre âge"},
            _options(
                {"en": "18–24", "de": "18–24", "fr": "18–24"},
                {"en": "25–34", "de": "25–34", "fr": "25–34"},
                {"en": "35–44", "de": "35–44", "fr": "35–44"},
                {"en": "45–54", "de": "45–54", "fr": "45–54"},
                {"en": "55–64", "de": "55–64", "fr": "55–64"},
                {"en": "65 or older", "de": "65 oder älter", "fr": "65 ans ou plus"},
            ),
        ),
        Question(
            "gender",
            {"en": "Gender", "de": "Geschlecht", "fr": "Genre"},
            _options(
                {"en": "Female", "de": "Weiblich", "fr": "Féminin"},
                {"en": "Male", "de": "Männlich", "fr": "Masculin"},
                {"en": "Diverse", "de": "Divers", "fr": "Divers"},
            ),
        ),
        Question(
            "education",
            {
                "en": "Highest completed education",
                "de": "Höchster abgeschlossener Bildungsabschluss",
                "fr": "Plus haut niveau d'études atteint",
            },
            _options(
                {
                    "en": "Compulsory schooling",
                    "de": "Pflichtschule",
                    "fr": "Scolarité obligatoire",
                },
                {
                    "en": "Vocational training / apprenticeship",
                    "de": "Lehre / berufsbildende Schule",
                    "fr": "Formation professionnelle / apprentissage",
                },
                {
                    "en": "Upper secondary school leaving certificate",
                    "de": "Matura / Abitur",
                    "fr": "Baccalauréat",
                },
                {"en": "Bachelor's degree", "de": "Bachelor", "fr": "Licence / Bachelor"},
                {
                    "en": "Master's degree or diploma",
                    "de": "Master / Diplom",
                    "fr": "Master / diplôme d'ingénieur",
                },
                {"en": "Doctorate", "de": "Doktorat / Promotion", "fr": "Doctorat"},
            ),
        ),
        Question(
            "first_language",
            {"en": "First language", "de": "Erstsprache", "fr": "Langue maternelle"},
            _options(
                {"en": "German", "de": "Deutsch", "fr": "Allemand"},
                {"en": "English", "de": "Englisch", "fr": "Anglais"},
                {"en": "French", "de": "Französisch", "fr": "Français"},
                {"en": "Other", "de": "Andere", "fr": "Autre"},
            ),
        ),
        Question(
            "llm_use",
            {
                "en": "How often do you use LLM chat tools (such as ChatGPT)?",
                "de": "Wie oft nutzen Sie LLM-Chatwerkzeuge (etwa ChatGPT)?",
                "fr": "À quelle fréquence utilisez-vous des outils de chat LLM (comme ChatGPT) ?",
            },
            _options(
                {"en": "Never", "de": "Nie", "fr": "Jamais"},
                {
                    "en": "Less than once a month",
                    "de": "Seltener als einmal im Monat",
                    "fr": "Moins d'une fois par mois",
                },
                {
                    "en": "A few times a month",
                    "de": "Einige Male im Monat",
                    "fr": "Quelques fois par mois",
                },
                {
                    "en": "Weekly",
                    "de": "Wöchentlich",
                    "fr": "Chaque semaine",
                },
                {"en": "Daily", "de": "Täglich", "fr": "Tous les jours"},
            ),
        ),
    ),
)
