"""Whether a study may become Active, and its status changes.

A study runs real (non-pilot) sessions only when everything a session needs
is in place: at least two active systems to allocate, an information sheet
and consent text in every language offered (and, under the naturalistic
protocol, the task in each of them), published wording of each companion scale
in those languages, and someone to run the sessions.
The study page shows the same checks, with what is missing, before activation.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import get_language, ngettext
from django.utils.translation import gettext as _

from audit.log import record
from audit.models import AuditEntry
from llm.keys import is_allowed
from scoring.instruments.companions import COMPANION_SCALES, missing_languages
from surveys.llm_policy import call_policy
from surveys.models import ConsentText, LLMSystem, Study, StudyMembership
from surveys.models.task_texts import languages_with_task

MIN_ACTIVE_SYSTEMS = 2


@dataclass(frozen=True)
class Check:
    label: str
    ok: bool
    missing: str = ""


class StudyNotReady(Exception):
    def __init__(self, missing: list[Check]):
        self.missing = missing
        super().__init__("; ".join(f"{check.label}: {check.missing}" for check in missing))


def languages_with_consent_text(study: Study) -> set[str]:
    return set(
        ConsentText.objects.filter(study=study)
        .exclude(information_sheet="")
        .exclude(consent_text="")
        .values_list("language", flat=True)
    )


def has_consent_text(study: Study, language: str) -> bool:
    return language in languages_with_consent_text(study)


def language_refusal(study: Study, language: str) -> str:
    """Why a real session cannot run in `language` ("" when it can): activation
    checks the texts and scales, but languages and texts may change after it."""
    if not has_consent_text(study, language):
        return _("There is no information sheet and consent text in this language yet.")
    if study.is_naturalistic and language not in languages_with_task(study):
        return _("There is no task in this language yet.")
    lacking = scales_lacking(study, language)
    if lacking:
        return _("Companion scales without published wording in this language: %(scales)s.") % {
            "scales": ", ".join(lacking)
        }
    return ""


def scales_lacking(study: Study, language: str) -> list[str]:
    """The names of the study's companion scales with no published wording in `language`."""
    here = get_language() or "en"
    lacking = []
    for key in study.companion_scales:
        scale = COMPANION_SCALES.get(key)
        if scale is None or language not in scale.languages:
            lacking.append(str(scale.label_in(here)) if scale else key)
    return lacking


def study_readiness(study: Study) -> list[Check]:
    """Every condition of activation, met or not (a handful of queries)."""
    systems = study.systems.filter(active=True).count()
    written = languages_with_consent_text(study)
    names = dict(settings.LANGUAGES)
    checks = [
        Check(
            _("At least two active LLM systems"),
            systems >= MIN_ACTIVE_SYSTEMS,
            _("%(count)d active; add or activate %(more)d more.")
            % {"count": systems, "more": MIN_ACTIVE_SYSTEMS - systems},
        )
    ]
    for code in study.languages:
        checks.append(
            Check(
                _("Information sheet and consent text: %(language)s")
                % {"language": names.get(code, code)},
                code in written,
                _("Not written yet."),
            )
        )
    checks += task_checks(study)
    checks += companion_scale_checks(study)
    key_check = key_variables_check(study)
    if key_check is not None:
        checks.append(key_check)
    if study.is_remote:
        checks.append(remote_systems_check(study))
    else:
        # A remote study runs without experimenters (docs/design/remote.md §11).
        checks.append(experimenter_check(study))
    return checks


def task_checks(study: Study) -> list[Check]:
    """The naturalistic task is written in every language offered: each
    participant reads it in their own (docs/design/remote.md §11.5)."""
    if not study.is_naturalistic:
        return []
    names = dict(settings.LANGUAGES)
    written = languages_with_task(study)
    return [
        Check(
            _("Naturalistic task: %(language)s") % {"language": names.get(code, code)},
            code in written,
            _("Not written yet."),
        )
        for code in study.languages
    ]


def experimenter_check(study: Study) -> Check:
    """Someone runs the sessions; an invitation still out is the step already
    taken, so the page says whom it waits for rather than to invite someone."""
    experimenters = study.memberships.filter(role=StudyMembership.Role.EXPERIMENTER).exists()
    pending = list(
        study.invitations.filter(
            role=StudyMembership.Role.EXPERIMENTER,
            accepted_at__isnull=True,
            expires_at__gt=timezone.now(),
        )
        .order_by("created_at")
        .values_list("email", flat=True)
    )
    if experimenters or not pending:
        return Check(
            _("At least one experimenter"),
            experimenters,
            _("Invite an experimenter on the Team page."),
        )
    missing = ngettext(
        "%(count)d invitation pending (%(addresses)s): activate once it is accepted.",
        "%(count)d invitations pending (%(addresses)s): activate once one is accepted.",
        len(pending),
    ) % {"count": len(pending), "addresses": ", ".join(pending)}
    return Check(_("At least one experimenter"), False, missing)


def companion_scale_checks(study: Study) -> list[Check]:
    """Each companion scale has published wording in every language offered
    (docs/design/validation.md §14.1): a participant reads a scale only as published."""
    names = dict(settings.LANGUAGES)
    checks = []
    for key in study.companion_scales:
        scale = COMPANION_SCALES.get(key)
        if scale is None:
            checks.append(
                Check(
                    _("Companion scale %(scale)s") % {"scale": key},
                    False,
                    _("Not a scale of this platform; choose it again."),
                )
            )
            continue
        lacking = missing_languages([key], study.languages).get(key, [])
        checks.append(
            Check(
                _("Companion scale %(scale)s in every language offered")
                % {"scale": scale.label_in(get_language() or "en")},
                not lacking,
                _("No published wording in %(languages)s: remove the scale or these languages.")
                % {"languages": ", ".join(str(names.get(code, code)) for code in lacking)},
            )
        )
    return checks


def remote_systems_check(study: Study) -> Check:
    """A remote participant can use only the built-in chat: no one imports a transcript."""
    external = list(
        study.systems.filter(active=True)
        .exclude(kind=LLMSystem.Kind.CONNECTED)
        .values_list("name", flat=True)
    )
    return Check(
        _("Remote study: every active system is connected (built-in chat)"),
        not external,
        _("Connect or deactivate: %(names)s.") % {"names": ", ".join(external)},
    )


def key_variables_check(study: Study) -> Check | None:
    """Every active connected system may use the key variable it names (llm/keys.py).

    A system stored before the operator's rules, or before they changed, may
    name a variable it may no longer use: its calls are refused before any
    request, so no participant should meet it. None: no system names one."""
    named = list(
        study.systems.filter(active=True, kind=LLMSystem.Kind.CONNECTED)
        .exclude(api_key_env="")
        .values_list("name", "api_key_env")
    )
    if not named:
        return None
    policy = call_policy()
    refused = [
        name for name, variable in named if not is_allowed(variable, study.slug, policy=policy)
    ]
    return Check(
        _("Connected systems use API key variables the server allows for this study"),
        not refused,
        _("Not allowed by the server's configuration: %(names)s. Ask the operator which key "
          "variable this study may use.") % {"names": ", ".join(refused)},
    )  # fmt: skip


def study_status_change(*, study: Study, status: str, actor=None) -> Study:
    """Set the study's status; becoming Active needs every readiness check met.

    A change is one audit row by `actor`, as a settings save is."""
    if status not in Study.Status.values:
        raise ValueError(status)
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if status == Study.Status.ACTIVE and locked.status != Study.Status.ACTIVE:
            missing = [check for check in study_readiness(locked) if not check.ok]
            if missing:
                raise StudyNotReady(missing)
        old_status = locked.status
        locked.status = status
        locked.save(update_fields=["status", "updated_at"])
        if status != old_status:
            record(
                AuditEntry.Kind.STUDY_CHANGED,
                actor=actor,
                study_id=locked.pk,
                target=f"study {locked.pk}",
                details={
                    "fields": {"status": {"old": old_status, "new": status}},
                    "fields_without_values": [],
                },
            )
    return locked
