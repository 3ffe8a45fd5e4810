"""The companion scales a study may give after each SHS (docs/design.md §14.1),
by key, in the order a study's form lists them."""

from scoring.instruments.companions.scale import CompanionScale, ScaleItem
from scoring.instruments.companions.scs import SCS
from scoring.instruments.companions.sus import SUS
from scoring.instruments.companions.trust import TRUST

COMPANION_SCALES: dict[str, CompanionScale] = {scale.key: scale for scale in (SUS, SCS, TRUST)}


def chosen_scales(scale_keys) -> list[CompanionScale]:
    """The registered scales among `scale_keys`, in their order (a study's choice)."""
    return [COMPANION_SCALES[key] for key in scale_keys if key in COMPANION_SCALES]


def missing_languages(scale_keys, languages) -> dict[str, list[str]]:
    """Scale key -> the study's languages it has no published wording in."""
    return {
        key: [code for code in languages if code not in COMPANION_SCALES[key].languages]
        for key in scale_keys
        if any(code not in COMPANION_SCALES[key].languages for code in languages)
    }


__all__ = ["COMPANION_SCALES", "CompanionScale", "ScaleItem", "chosen_scales", "missing_languages"]
