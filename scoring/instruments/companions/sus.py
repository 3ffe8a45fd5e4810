"""The System Usability Scale (Brooke 1996): ten items, five points, 0-100.

The English wording is Brooke's, unchanged. Brooke made the scale free to use
provided the source is acknowledged; the form carries "© Digital Equipment
Corporation, 1986".
"""

from dataclasses import dataclass

import numpy as np

from scoring.instruments.common import Option
from scoring.instruments.companions.scale import CompanionScale, ScaleItem


@dataclass(frozen=True)
class SystemUsabilityScale(CompanionScale):
    def score_array(self, items: np.ndarray) -> np.ndarray:
        # Brooke's rule: odd items contribute (code - 1), even items (5 - code);
        # the sum (0-40) times 2.5 gives 0-100.
        items = np.asarray(items, dtype=float)
        contributions = np.where(self._reversed_mask(), 5.0 - items, items - 1.0)
        return contributions.sum(axis=1) * 2.5

    def _reversed_mask(self) -> np.ndarray:
        return np.array([item.reversed for item in self.items])


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

SUS = SystemUsabilityScale(
    key="sus",
    version="sus-1996",
    label={"en": "System Usability Scale (SUS)"},
    items=tuple(
        ScaleItem(key=f"sus{number}", number=number, text={"en": text}, reversed=number % 2 == 0)
        for number, text in enumerate(_ITEMS_EN, start=1)
    ),
    options=(
        Option(1, {"en": "Strongly disagree"}),
        Option(2, {"en": "2"}),
        Option(3, {"en": "3"}),
        Option(4, {"en": "4"}),
        Option(5, {"en": "Strongly agree"}),
    ),
    instructions={"en": "Please answer each statement about the system you just used."},
    languages=("en",),
    credit={
        "en": (
            "System Usability Scale (SUS) © Digital Equipment Corporation, 1986; "
            "J. Brooke, free to use with acknowledgement of the source; shown unchanged."
        )
    },
    licence_name="free to use with acknowledgement (Brooke 1996)",
    licence_url="https://doi.org/10.1201/9781498710411-35",
    citation=(
        "Brooke, J. (1996). SUS: A 'quick and dirty' usability scale. In P. W. Jordan, "
        "B. Thomas, B. A. Weerdmeester & I. L. McClelland (Eds.), Usability Evaluation in "
        "Industry (pp. 189-194). Taylor & Francis."
    ),
    score_range=(0.0, 100.0),
)
