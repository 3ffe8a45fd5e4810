"""Writing the information sheet and consent text of a language.

A version that someone consented to never changes: revising it creates the
next version (1.0 -> 1.1), and the older one stays readable in the history
of the language. A version no one has consented to yet is corrected in place.
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count
from django.utils.translation import gettext as _

from audit.log import record
from audit.models import AuditEntry
from surveys.models import ConsentText, Study
from surveys.models.studies import FIRST_CONSENT_VERSION, next_consent_version


@dataclass(frozen=True)
class ConsentRevision:
    text: ConsentText
    new_version: bool  # False: the version was corrected in place, or nothing changed
    changed: bool


def consent_text_revise(
    *, study: Study, language: str, information_sheet: str, consent_text: str, actor=None
) -> ConsentRevision:
    """Save the wording of `language`: in place, or as a new version if it was consented to.

    A save that changes the wording is one audit row by `actor`, naming the
    version, never its words."""
    if language not in study.languages:
        raise ValidationError(_("The study is not offered in this language."))
    wording = (information_sheet.strip(), consent_text.strip())
    if not all(wording):
        raise ValidationError(_("Write both the information sheet and the consent statement."))
    with transaction.atomic():
        # One revision of a study's texts at a time: two coordinators saving at
        # once cannot both create the same next version.
        Study.objects.select_for_update().filter(pk=study.pk).first()
        # The consent step locks the current text while it records a consent,
        # so "no one consented yet" stays true until this transaction ends.
        current = (
            ConsentText.objects.select_for_update()
            .filter(study=study, language=language)
            .order_by("-pk")
            .first()
        )
        if current is not None and current.wording == wording:
            return ConsentRevision(current, new_version=False, changed=False)
        if current is not None and not current.records.exists():
            current.information_sheet, current.consent_text = wording
            current.save()
            return _recorded(ConsentRevision(current, new_version=False, changed=True), actor)
        version = FIRST_CONSENT_VERSION if current is None else _free_version(current)
        text = ConsentText.objects.create(
            study=study,
            language=language,
            version=version,
            information_sheet=wording[0],
            consent_text=wording[1],
        )
        return _recorded(ConsentRevision(text, new_version=True, changed=True), actor)


def _recorded(revision: ConsentRevision, actor) -> ConsentRevision:
    text = revision.text
    record(
        AuditEntry.Kind.CONSENT_VERSION,
        actor=actor,
        study_id=text.study_id,
        target=f"consent text {text.pk}",
        details={
            "language": text.language,
            "version": text.version,
            "new_version": revision.new_version,
        },
    )
    return revision


def _free_version(current: ConsentText) -> str:
    taken = set(
        ConsentText.objects.filter(
            study_id=current.study_id, language=current.language
        ).values_list("version", flat=True)
    )
    version = next_consent_version(current.version)
    while version in taken:
        version = next_consent_version(version)
    return version


def consent_history(study: Study) -> dict[str, list[ConsentText]]:
    """Every version of every language, newest first, with its number of consents."""
    history: dict[str, list[ConsentText]] = {code: [] for code in study.languages}
    for text in study.consent_texts.annotate(consents=Count("records")).order_by("language", "-pk"):
        history.setdefault(text.language, []).append(text)
    return history
