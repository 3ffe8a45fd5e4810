"""The sections other apps add to the study report: the criterion study
(docs/design/criterion.md §13) and the validation programme (§14).

Those apps build on exports, so the report cannot import them: each
registers its section when Django starts (its AppConfig.ready), and the
report builds every registered section that applies to the study. A section
is registered by the dotted path of its ReportSection and imported only when
a report is built: its statistics load libraries (statsmodels, semopy) that
no other command should pay for at start. The section's figures are stored
under its key in the report's data, where its template (included by
templates/exports/report/_body.html) reads them.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.utils.module_loading import import_string

from surveys.models import Study


@dataclass(frozen=True)
class ReportSection:
    # The key of the report's data the section is stored under.
    key: str
    # Whether the study's report gets the section, given the report's own figures.
    applies: Callable[[Study, dict], bool]
    # The section's figures, JSON-safe: (study, as_of, advance=..., language=...).
    build: Callable[..., dict]
    # How many times `build` calls `advance` (the report job's progress).
    progress_steps: int = 0


_paths: list[str] = []


def register_section(path: str) -> None:
    """Add the ReportSection at `path` (e.g. "criterion.report.SECTION") to
    every study report; registering it again changes nothing."""
    if path not in _paths:
        _paths.append(path)


def report_sections() -> tuple[ReportSection, ...]:
    """The registered sections, in the order their apps were installed."""
    return tuple(import_string(path) for path in _paths)


def build_sections(
    study: Study,
    data: dict,
    as_of: datetime,
    *,
    advance: Callable[[], None],
    language: str,
) -> dict[str, dict]:
    """The figures of each section that applies to the study, by key."""
    return {
        section.key: section.build(study, as_of, advance=advance, language=language)
        for section in report_sections()
        if section.applies(study, data)
    }
