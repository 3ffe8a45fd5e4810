"""Administrator feedback questionnaire (docs/design/instrument.md §3.2, paper Table 5 and Figures
1-5).

Answered by the experimenter at the end of each session, after the
participant's demographics: question 5 judges the length of that section,
so it must have happened. Codes follow the order of the options, 1 = the
first (most favourable) answer.
"""

from scoring.instruments.common import Option, Question, Questionnaire

YES = {"en": "Yes", "de": "Ja", "fr": "Oui"}
NEUTRAL = {"en": "Neutral", "de": "Neutral", "fr": "Neutre"}
RATHER_NOT = {"en": "Rather not", "de": "Eher nicht", "fr": "Plutôt pas"}
NO = {"en": "No", "de": "Nein", "fr": "Non"}

FEEDBACK = Questionnaire(
    key="administrator_feedback",
    version="feedback-1.0",
    title={
        "en": "Administrator feedback",
        "de": "Rückmeldung der Versuchsleitung",
        "fr": "Retour de l'administrateur",
    },
    questions=(
        Question(
            "clarity",
            {
                "en": "Were the SHS items understandable for the participant?",
                "de": "Waren die SHS-Items für die teilnehmende Person verständlich?",
                "fr": "Les items de la SHS étaient-ils compréhensibles pour le participant ?",
            },
            (
                Option(1, YES),
                Option(
                    2,
                    {
                        "en": "Yes, with minor limitations",
                        "de": "Ja, mit kleinen Einschränkungen",
                        "fr": "Oui, avec de légères réserves",
                    },
                ),
                Option(3, NEUTRAL),
                Option(4, RATHER_NOT),
                Option(5, NO),
            ),
        ),
        Question(
            "relevance",
            {
                "en": "Are the SHS items relevant for evaluating LLM output?",
                "de": "Sind die SHS-Items für die Bewertung von LLM-Ausgaben relevant?",
                "fr": "Les items de la SHS sont-ils pertinents pour évaluer les réponses d'un LLM ?",
            },
            (
                Option(1, YES),
                Option(
                    2,
                    {
                        "en": "Relevant with limitations",
                        "de": "Mit Einschränkungen relevant",
                        "fr": "Pertinents avec des réserves",
                    },
                ),
                Option(3, NEUTRAL),
                Option(4, RATHER_NOT),
                Option(5, NO),
            ),
        ),
        Question(
            "response_options",
            {
                "en": "Were the five response options appropriate?",
                "de": "Waren die fünf Antwortmöglichkeiten angemessen?",
                "fr": "Les cinq options de réponse étaient-elles appropriées ?",
            },
            (
                Option(1, YES),
                Option(2, {"en": "Mostly", "de": "Größtenteils", "fr": "En grande partie"}),
                Option(3, NEUTRAL),
                Option(4, RATHER_NOT),
                Option(5, NO),
            ),
        ),
        Question(
            "explanation_needed",
            {
                "en": "Did you have to explain item wording to the participant?",
                "de": "Mussten Sie der teilnehmenden Person Formulierungen der Items erklären?",
                "fr": "Avez-vous dû expliquer la formulation des items au participant ?",
            },
            (
                Option(1, {"en": "No, never", "de": "Nein, nie", "fr": "Non, jamais"}),
                Option(2, {"en": "Occasionally", "de": "Gelegentlich", "fr": "Occasionnellement"}),
                Option(
                    3,
                    {
                        "en": "For most follow-up questions",
                        "de": "Bei den meisten Nachfragen",
                        "fr": "Pour la plupart des questions de suivi",
                    },
                ),
                Option(4, {"en": "Always", "de": "Immer", "fr": "Toujours"}),
            ),
        ),
        Question(
            "demographics_length",
            {
                "en": "The length of the demographic section was:",
                "de": "Die Länge des demografischen Teils war:",
                "fr": "La longueur de la partie démographique était :",
            },
            (
                Option(1, {"en": "Exactly right", "de": "Genau richtig", "fr": "Parfaite"}),
                Option(2, {"en": "Too long", "de": "Zu lang", "fr": "Trop longue"}),
                Option(3, {"en": "Too short", "de": "Zu kurz", "fr": "Trop courte"}),
            ),
        ),
    ),
)
