"""The companion scales a study may give after each SHS (docs/design/validation.md §14.1),
by key, in the order a study's form lists them."""

from collections.abc import Collection, Iterable

from scoring.instruments.companions.scale import CompanionScale, ScaleItem
from scoring.instruments.companions.scs import SCS
from scoring.instruments.companions.sus import SUS
from scoring.instruments.companions.trust import TRUST

COMPANION_SCALES: dict[str, CompanionScale] = {scale.key: scale for scale in (SUS, SCS, TRUST)}


def chosen_scales(scale_keys: Iterable[str]) -> list[CompanionScale]:
    """The registered scales among `scale_keys`, in their order (a study's choice)."""
    return [COMPANION_SCALES[key] for key in scale_keys if key in COMPANION_SCALES]


def missing_languages(
    scale_keys: Iterable[str], languages: Collection[str]
) -> dict[str, list[str]]:
    """Scale key -> the study's languages it has no published wording in."""
    return {
        key: [code for code in languages if code not in COMPANION_SCALES[key].languages]
        for key in scale_keys
        if any(code not in COMPANION_SCALES[key].languages for code in languages)
    }


__all__ = ["COMPANION_SCALES", "CompanionScale", "ScaleItem", "chosen_scales", "missing_languages"]
