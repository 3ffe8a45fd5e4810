"""The System Causability Scale (Holzinger, Carrington & Müller 2020): ten
items, five points, every item positively keyed, score = sum / 50 (0.2-1.0).

The English wording is the authors', unchanged; some items end without a full
stop, as in the copies of the scale checked for this work. The article is open
access under CC BY 4.0, which allows reuse with attribution.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.instruments.common import Option
from scoring.instruments.companions.scale import CompanionScale, ScaleItem

# The paper's divisor: ten items times the highest code, so that a form
# answered "strongly agree" throughout scores 1.0.
SCS_DIVISOR = 50.0


@dataclass(frozen=True)
class SystemCausabilityScale(CompanionScale):
    def score_array(self, items: NDArray[Any]) -> NDArray[np.float64]:
        # No item is reversed, so the sum of the raw codes is the rating;
        # a missing answer (NaN) leaves the row's score NaN.
        scores: NDArray[np.float64] = np.asarray(items, dtype=float).sum(axis=1) / SCS_DIVISOR
        return scores


_ITEMS_EN = (
    "I found that the data included all relevant known causal factors with sufficient "
    "precision and granularity",
    "I understood the explanations within the context of my work.",
    "I could change the level of detail on demand.",
    "I did not need support to understand the explanations.",
    "I found the explanations helped me to understand causality",
    "I was able to use the explanations with my knowledge base.",
    "I did not find inconsistencies between explanations",
    "I think that most people would learn to understand the explanations very quickly",
    "I did not need more references in the explanations: e.g., medical guidelines, regulations.",
    "I received the explanations in a timely and efficient manner.",
)

SCS = SystemCausabilityScale(
    key="scs",
    version="scs-2020",
    label={"en": "System Causability Scale (SCS)"},
    items=tuple(
        ScaleItem(key=f"scs{number}", number=number, text={"en": text})
        for number, text in enumerate(_ITEMS_EN, start=1)
    ),
    options=(
        Option(1, {"en": "Strongly disagree"}),
        Option(2, {"en": "2"}),
        Option(3, {"en": "3"}),
        Option(4, {"en": "4"}),
        Option(5, {"en": "Strongly agree"}),
    ),
    instructions={"en": "Please answer each statement about the explanations the system gave you."},
    languages=("en",),
    credit={
        "en": (
            "System Causability Scale (SCS) © Andreas Holzinger, André Carrington and "
            "Heimo Müller, 2020, licensed under CC BY 4.0; shown unchanged."
        )
    },
    licence_name="CC BY 4.0",
    licence_url="https://creativecommons.org/licenses/by/4.0/",
    citation=(
        "Holzinger, A., Carrington, A., & Müller, H. (2020). Measuring the Quality of "
        "Explanations: The System Causability Scale (SCS). Comparing Human and Machine "
        "Explanations. KI - Künstliche Intelligenz, 34(2), 193-198. "
        "https://doi.org/10.1007/s13218-020-00636-z"
    ),
    score_range=(0.2, 1.0),
    scoring_rule="the sum of the ten codes divided by 50 (Holzinger et al. 2020)",
)
