"""The Trust in Automation scale (Jian, Bisantz & Drury 2000): twelve items,
seven points (1 not at all .. 7 extremely). Items 1-5 are worded as distrust
and are reversed (8 - code); the score is the mean of the twelve, 1-7.

The English wording is the checklist's, unchanged. The article is not
published under an open licence: the checklist is used in academic research
with a citation of the article, which is what the credit line says.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.common import Option
from scoring.instruments.companions.scale import CompanionScale, ScaleItem

DISTRUST_ITEMS = (1, 2, 3, 4, 5)


@dataclass(frozen=True)
class TrustInAutomationScale(CompanionScale):
    def score_array(self, items: NDArray[Any]) -> NDArray[np.float64]:
        # Turning the distrust items round makes every column point towards
        # trust; the mean keeps the checklist's own 1-7 metric.
        scores: NDArray[np.float64] = self.keyed(items).mean(axis=1)
        return scores


_ITEMS_EN = (
    "The system is deceptive",
    "The system behaves in an underhanded manner",
    "I am suspicious of the system's intent, action, or outputs",
    "I am wary of the system",
    "The system's actions will have a harmful or injurious outcome",
    "I am confident in the system",
    "The system provides security",
    "The system has integrity",
    "The system is dependable",
    "The system is reliable",
    "I can trust the system",
    "I am familiar with the system",
)

TRUST = TrustInAutomationScale(
    key="trust",
    version="jian-2000",
    label={"en": "Trust in Automation (Jian, Bisantz & Drury)"},
    items=tuple(
        ScaleItem(
            key=f"trust{number}",
            number=number,
            text={"en": text},
            reversed=number in DISTRUST_ITEMS,
        )
        for number, text in enumerate(_ITEMS_EN, start=1)
    ),
    options=(
        Option(1, {"en": "Not at all"}),
        *(Option(code, {"en": str(code)}) for code in range(2, 7)),
        Option(7, {"en": "Extremely"}),
    ),
    instructions={
        "en": (
            "Please rate how strongly each statement describes your impression of the "
            "system you just used."
        )
    },
    languages=("en",),
    credit={
        "en": (
            "Trust in Automation checklist from J.-Y. Jian, A. M. Bisantz and C. G. Drury "
            "(2000), used for academic research with citation of the article; shown "
            "unchanged."
        )
    },
    licence_name="no open licence: academic use with citation (Jian, Bisantz & Drury 2000)",
    licence_url="https://doi.org/10.1207/S15327566IJCE0401_04",
    citation=(
        "Jian, J.-Y., Bisantz, A. M., & Drury, C. G. (2000). Foundations for an Empirically "
        "Determined Scale of Trust in Automated Systems. International Journal of Cognitive "
        "Ergonomics, 4(1), 53-71. https://doi.org/10.1207/S15327566IJCE0401_04"
    ),
    score_range=(1.0, 7.0),
    scoring_rule="the mean of the twelve codes after reversing (Jian et al. 2000)",
)
