"""Versions of a study's pre-registration, their freeze and the plan a report
follows (docs/design/criterion.md §13.1, paper 8.2).

A version is edited in place until data collection begins. The version in
force when the study's first non-pilot session started is frozen then; every
later change is a new version marked as made after data collection began, and
the report lists where it differs from the frozen one.

The freeze is stamped lazily, on every read and write, on the version saved
before any counted session (its `after_data_collection` flag) with the first
such session's start time, so it is right whichever code path started it;
a receiver on session creation (criterion/preregistration/signals.py) stamps it
at once as well.
"""

import hashlib
import math
from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, Subquery
from django.utils.translation import gettext as _

from audit.log import record
from audit.models import AuditEntry
from criterion.models import REGISTERED_FIELDS, PreRegistration
from surveys.models import Study, StudySession, User


def _first_counted_start(study_id: int) -> Subquery:
    """When the study's first non-pilot session started (NULL before that)."""
    return Subquery(
        StudySession.objects.filter(study_id=study_id, is_pilot=False)
        .order_by("created_at")
        .values("created_at")[:1]
    )


def freeze_if_collecting(study: Study) -> bool:
    """Stamp `frozen_at` on the version that was current when the first
    non-pilot session started; True when this call stamped it.

    One UPDATE, a no-op once stamped or before any such session. Only a
    version made before data collection can be frozen; a stamp is never taken
    back (a session a coordinator later marks as pilot leaves it in place).
    """
    return bool(freeze_study_id(study.pk))


def freeze_study_id(study_id: int) -> int:
    """freeze_if_collecting by id (for the session receiver); rows stamped.

    Which version was in force is read from `after_data_collection`, written
    under the study's lock when the version was saved, never from comparing
    clocks: a session dated before the version (a relabelled pilot, a clock
    set back) would otherwise leave a version saved before data collection
    unfrozen, and the report would call it late while the version says it
    was not (`plan_for_report` reads the same flag).
    """
    first_start = _first_counted_start(study_id)
    collecting = StudySession.objects.filter(study_id=study_id, is_pilot=False)
    current_then = (
        PreRegistration.objects.filter(study_id=study_id, after_data_collection=False)
        .filter(Exists(collecting))
        .order_by("-version")
        .values("pk")[:1]
    )
    return PreRegistration.objects.filter(pk=Subquery(current_then), frozen_at__isnull=True).update(
        frozen_at=first_start
    )


def current_version(study: Study) -> PreRegistration | None:
    """The latest version (the one the analysis follows), freeze stamped."""
    freeze_if_collecting(study)
    return PreRegistration.objects.filter(study=study).order_by("-version").first()


def is_editable(version: PreRegistration) -> bool:
    """Only a version no session has seen is corrected in place."""
    return version.frozen_at is None and not version.after_data_collection


def collection_began(study: Study) -> bool:
    return StudySession.objects.filter(study=study, is_pilot=False).exists()


def saves_in_place(study: Study, current: PreRegistration | None) -> bool:
    """Whether saving now corrects `current` (else it creates the next version)."""
    return current is not None and is_editable(current) and not collection_began(study)


def save_version(study: Study, data: dict, user: User | None) -> PreRegistration:
    """Save the registered fields in `data` (the others keep their values):
    version 1, the current version corrected in place while it is editable,
    or else a new version marked as made after data collection began.

    Raises ValidationError (nothing saved) for an unknown field or a value out
    of range; returns the current version unchanged when nothing differs.
    """
    with transaction.atomic():
        # Session starts hold this lock while they create the session (and its
        # receiver freezes), so no session starts between the check and the write.
        Study.objects.select_for_update().filter(pk=study.pk).first()
        freeze_if_collecting(study)
        current = PreRegistration.objects.filter(study=study).order_by("-version").first()
        values = validate_registration({**(current.registered() if current else {}), **data})
        if current is not None and current.registered() == values:
            return current
        if saves_in_place(study, current):
            changed = _changed_fields(current, values)
            for name, value in values.items():
                setattr(current, name, value)
            current.save()
            return _recorded(current, user, changed, in_place=True)
        changed = _changed_fields(current, values)
        version = PreRegistration(
            study=study,
            version=current.version + 1 if current else 1,
            created_by=user,
            # Not in place: the current version is frozen or later, or sessions ran.
            after_data_collection=current is not None or collection_began(study),
            **values,
        )
        version.save()
        return _recorded(version, user, changed, in_place=False)


def _changed_fields(current: PreRegistration | None, values: dict) -> list[str]:
    before = current.registered() if current else {}
    return sorted(name for name, value in values.items() if before.get(name) != value)


def _recorded(
    version: PreRegistration, user: User | None, changed: list[str], *, in_place: bool
) -> PreRegistration:
    """One audit row per save, naming the fields it changed: the plan's text
    and hypotheses stay in the version itself."""
    record(
        AuditEntry.Kind.PREREGISTRATION_VERSION,
        actor=user,
        study_id=version.study_id,
        target=f"pre-registration {version.pk}",
        details={
            "version": version.version,
            "in_place": in_place,
            "after_data_collection": version.after_data_collection,
            "fields": changed,
        },
    )
    return version


def validate_registration(data: dict) -> dict:
    """The registered values in `data`, the model's defaults for the others,
    converted and checked by the model's own validators; ValidationError
    naming the field otherwise."""
    unknown = sorted(set(data) - set(REGISTERED_FIELDS))
    if unknown:
        raise ValidationError(
            _("Not a registered field: %(fields)s.") % {"fields": ", ".join(unknown)}
        )
    candidate = PreRegistration(**data)
    candidate.clean_fields(
        exclude=[name for name in _model_field_names() if name not in REGISTERED_FIELDS]
    )
    # A browser sends CRLF: the fingerprint should not depend on the platform typed on.
    candidate.text = (candidate.text or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    registered = candidate.registered()
    # The range validators let NaN through (every comparison with it is false).
    not_finite = [name for name, value in registered.items() if _not_finite(value)]
    if not_finite:
        raise ValidationError({name: _("Enter a finite number.") for name in not_finite})
    check_plan(registered)
    return registered


def _not_finite(value) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def _model_field_names() -> list[str]:
    return [model_field.name for model_field in PreRegistration._meta.fields]


def check_plan(values: dict) -> None:
    """What the field ranges cannot say: the analysis (docs/design/criterion.md §13.3)
    takes open intervals, and the two thresholds bound the same correlation."""
    errors = {}
    for name in ("h1_threshold", "falsification_threshold"):
        if values[name] >= 1.0:
            errors[name] = _("No correlation can exceed 1: a threshold of 1 cannot be tested.")
    if values["alpha"] >= 0.5:
        errors["alpha"] = _("The alpha level must be below 0.5.")
    # A falsification bound above H1's would call the instrument failed at a
    # correlation that confirms H1.
    if not errors and values["falsification_threshold"] > values["h1_threshold"]:
        errors["falsification_threshold"] = _(
            "The falsification threshold cannot exceed H1's threshold (r ≥ %(h1)s)."
        ) % {"h1": values["h1_threshold"]}
    if errors:
        raise ValidationError(errors)


# -- reading the history --------------------------------------------------------


@dataclass
class Registration:
    """Every version of a study's pre-registration, oldest first."""

    versions: list[PreRegistration]
    latest: PreRegistration | None = field(init=False)
    frozen: PreRegistration | None = field(init=False)

    def __post_init__(self):
        self.latest = self.versions[-1] if self.versions else None
        self.frozen = next((v for v in self.versions if v.frozen_at is not None), None)

    def deviations(self) -> list[dict]:
        """Each change, made after data collection began, of a registered field
        away from its frozen value, at the version that made it; `in_force`
        says whether the latest version still holds it."""
        if self.frozen is None:
            return []
        frozen_values = self.frozen.registered()
        found = []
        previous = self.frozen.registered()
        for version in self.versions:
            if version.version <= self.frozen.version:
                continue
            values = version.registered()
            for name in REGISTERED_FIELDS:
                if values[name] != frozen_values[name] and values[name] != previous[name]:
                    found.append(_deviation(name, frozen_values[name], version, self.latest))
            previous = values
        return found


def _deviation(name: str, frozen_value, version: PreRegistration, latest) -> dict:
    new_value = getattr(version, name)
    return {
        "field": name,
        "label": field_label(name),
        "frozen_value": frozen_value,
        "new_value": new_value,
        "version": version.version,
        "created_at": version.created_at.isoformat(),
        "in_force": getattr(latest, name) == new_value,
    }


def fingerprint_matches(version: PreRegistration) -> bool:
    """The stored SHA-256 recomputed from the stored values (a row altered
    outside the platform no longer matches)."""
    recomputed = hashlib.sha256(version.canonical_json().encode("utf-8")).hexdigest()
    return recomputed == version.sha256


def field_label(name: str) -> str:
    return str(PreRegistration._meta.get_field(name).verbose_name)


def registration(study: Study) -> Registration:
    """The history in one query (plus the freeze's one), whatever its length."""
    freeze_if_collecting(study)
    versions = PreRegistration.objects.filter(study=study).select_related("created_by")
    return Registration(list(versions.order_by("version")))


def plan_for_report(study: Study) -> dict:
    """What the criterion report follows, JSON-safe; {} when nothing is
    registered (the report then says so and uses the paper's values).

    `followed`: the latest version, which the tests follow; `frozen`: the one
    in force when data collection began (None if none was, or before it);
    `data_collection_began` tells those two apart; `deviations`;
    `plan_kwargs`: the followed values as scoring.stats.validity.plan.Plan takes them.
    """
    history = registration(study)
    followed = history.latest
    if followed is None:
        return {}
    return {
        "followed": _summary(followed),
        "frozen": _summary(history.frozen) if history.frozen else None,
        # The flag the freeze follows, so the two never disagree: collection
        # began -> the version saved before it is the frozen one.
        "registered_before_data_collection": any(
            not version.after_data_collection for version in history.versions
        ),
        # Without a frozen version: False = not frozen yet; True = registered too late.
        "data_collection_began": history.frozen is not None or collection_began(study),
        "deviations": history.deviations(),
        "plan_kwargs": {
            "h1_threshold": followed.h1_threshold,
            "falsification_threshold": followed.falsification_threshold,
            "alpha": followed.alpha,
            "sidedness": str(followed.sidedness),
            "primary": str(followed.primary_analysis),
            "seed": followed.bootstrap_seed,
            "resamples": followed.bootstrap_resamples,
            "planned_n": followed.planned_n,
            "h3_predictor": str(followed.h3_predictor),
        },
    }


def _summary(version: PreRegistration) -> dict:
    return {
        "version": version.version,
        "created_at": version.created_at.isoformat(),
        "frozen_at": version.frozen_at.isoformat() if version.frozen_at else None,
        "after_data_collection": version.after_data_collection,
        "sha256": version.sha256,
        "text": version.text,
    }
