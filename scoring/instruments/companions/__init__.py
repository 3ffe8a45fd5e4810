"""The companion scales a study may give after each SHS (docs/design.md §14.1),
by key, in the order a study's form lists them."""

from scoring.instruments.companions.scale import CompanionScale, ScaleItem
from scoring.instruments.companions.scs import SCS
from scoring.instruments.companions.sus import SUS
from scoring.instruments.companions.trust import TRUST

COMPANION_SCALES: dict[str, CompanionScale] = {scale.key: scale for scale in (SUS, SCS, TRUST)}


def missing_languages(scale_keys, languages) -> dict[str, list[str]]:
    """Scale key -> the study's languages it has no published wording in."""
    return {
        key: [code for code in languages if code not in COMPANION_SCALES[key].languages]
        for key in scale_keys
        if any(code not in COMPANION_SCALES[key].languages for code in languages)
    }


__all__ = ["COMPANION_SCALES", "CompanionScale", "ScaleItem", "missing_languages"]
