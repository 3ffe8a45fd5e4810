"""The System Usability Scale (Brooke 1996): ten items, five points, 0-100.

The English wording is Brooke's, unchanged. Brooke made the scale free to use
provided the source is acknowledged; the form carries "© Digital Equipment
Corporation, 1986". The German wording is Rummel's published translation and
the French the F-SUS of Gronier & Baudet, free to use with a citation
(docs/design/validation.md §14.1); neither is ours, so neither may be edited.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.common import Option
from scoring.instruments.companions.scale import CompanionScale, ScaleItem


@dataclass(frozen=True)
class SystemUsabilityScale(CompanionScale):
    def score_array(self, items: NDArray[Any]) -> NDArray[np.float64]:
        # Brooke's rule: odd items contribute (code - 1), even items (5 - code),
        # i.e. every keyed code less 1; the sum (0-40) times 2.5 gives 0-100.
        scores: NDArray[np.float64] = (self.keyed(items) - 1.0).sum(axis=1) * 2.5
        return scores


_ITEMS_EN = (
    "I think that I would like to use this system frequently.",
    "I found the system unnecessarily complex.",
    "I thought the system was easy to use.",
    "I think that I would need the support of a technical person to be able to use this system.",
    "I found the various functions in this system were well integrated.",
    "I thought there was too much inconsistency in this system.",
    "I would imagine that most people would learn to use this system very quickly.",
    "I found the system very cumbersome to use.",
    "I felt very confident using the system.",
    "I needed to learn a lot of things before I could get going with this system.",
)
_ITEMS_DE = (
    "Ich denke, dass ich das System gerne häufig benutzen würde.",
    "Ich fand das System unnötig komplex.",
    "Ich fand das System einfach zu benutzen.",
    "Ich glaube, ich würde die Hilfe einer technisch versierten Person benötigen, um das "
    "System benutzen zu können.",
    "Ich fand, die verschiedenen Funktionen in diesem System waren gut integriert.",
    "Ich denke, das System enthielt zu viele Inkonsistenzen.",
    "Ich kann mir vorstellen, dass die meisten Menschen den Umgang mit diesem System sehr "
    "schnell lernen.",
    "Ich fand das System sehr umständlich zu nutzen.",
    "Ich fühlte mich bei der Benutzung des Systems sehr sicher.",
    "Ich musste eine Menge lernen, bevor ich anfangen konnte das System zu verwenden.",
)
_ITEMS_FR = (
    "Je voudrais utiliser ce système fréquemment.",
    "Ce système est inutilement complexe.",
    "Ce système est facile à utiliser.",
    "J’aurais besoin du soutien d’un technicien pour être capable d’utiliser ce système.",
    "Les différentes fonctionnalités de ce système sont bien intégrées.",
    "Il y a trop d’incohérences dans ce système.",
    "La plupart des gens apprendront à utiliser ce système très rapidement.",
    "Ce système est très lourd à utiliser.",
    "Je me suis senti(e) très en confiance en utilisant ce système.",
    "J’ai eu besoin d’apprendre beaucoup de choses avant de pouvoir utiliser ce système.",
)

SUS = SystemUsabilityScale(
    key="sus",
    version="sus-1996",
    label={
        "en": "System Usability Scale (SUS)",
        "de": "System Usability Scale (SUS)",
        "fr": "System Usability Scale (F-SUS)",
    },
    items=tuple(
        ScaleItem(
            key=f"sus{number}",
            number=number,
            text={"en": english, "de": german, "fr": french},
            reversed=number % 2 == 0,
        )
        for number, (english, german, french) in enumerate(
            zip(_ITEMS_EN, _ITEMS_DE, _ITEMS_FR, strict=True), start=1
        )
    ),
    # Only the two ends carry words, in every published version.
    options=(
        Option(
            1,
            {
                "en": "Strongly disagree",
                "de": "Stimme überhaupt nicht zu",
                "fr": "Pas du tout d’accord",
            },
        ),
        *(Option(code, {"en": str(code), "de": str(code), "fr": str(code)}) for code in (2, 3, 4)),
        Option(5, {"en": "Strongly agree", "de": "Stimme voll zu", "fr": "Tout à fait d’accord"}),
    ),
    instructions={
        "en": "Please answer each statement about the system you just used.",
        "de": "Bitte beantworten Sie jede Aussage zu dem System, das Sie gerade benutzt haben.",
        "fr": "Veuillez répondre à chaque affirmation sur le système que vous venez d’utiliser.",
    },
    languages=("en", "de", "fr"),
    credit={
        "en": (
            "System Usability Scale (SUS) © Digital Equipment Corporation, 1986; "
            "J. Brooke, free to use with acknowledgement of the source; shown unchanged."
        ),
        "de": (
            "System Usability Scale (SUS) © Digital Equipment Corporation, 1986; J. Brooke, "
            "frei nutzbar mit Quellenangabe; deutsche Übersetzung von B. Rummel; "
            "unverändert wiedergegeben."
        ),
        "fr": (
            "System Usability Scale (SUS) © Digital Equipment Corporation, 1986 ; J. Brooke, "
            "libre d’utilisation avec citation de la source ; version française F-SUS de "
            "G. Gronier et A. Baudet ; reproduite sans modification."
        ),
    },
    licence_name="free to use with acknowledgement (Brooke 1996)",
    licence_url="https://doi.org/10.1201/9781498710411-35",
    citation=(
        "Brooke, J. (1996). SUS: A 'quick and dirty' usability scale. In P. W. Jordan, "
        "B. Thomas, B. A. Weerdmeester & I. L. McClelland (Eds.), Usability Evaluation in "
        "Industry (pp. 189-194). Taylor & Francis."
    ),
    translation_sources={
        "de": (
            "Rummel, B. (2015). System Usability Scale - jetzt auch auf Deutsch. "
            "SAP User Experience Community."
        ),
        "fr": (
            "Gronier, G., & Baudet, A. (2021). Psychometric evaluation of the F-SUS: Creation "
            "and validation of the French version of the System Usability Scale. International "
            "Journal of Human-Computer Interaction. https://doi.org/10.1080/10447318.2021.1898828"
        ),
    },
    score_range=(0.0, 100.0),
    scoring_rule="odd items add (code − 1), even items (5 − code); the sum times 2.5 (Brooke 1996)",
)
