"""The sections of the replication package's R script (docs/design/exports.md
§7.7): each recomputes one part of the study report in R and names the
report's figures it recomputes.

The apps above exports (validation, criterion) register their sections when
Django starts, as they do their report sections (exports.report.sections):
exports cannot import them. A section is registered by the dotted path of its
RSection and imported only when a package is built.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.utils.module_loading import import_string

# How closely a recomputed figure must agree with the report's, by the kind of
# computation behind it (docs/design/exports.md §7.7). A closed-form figure is
# the same arithmetic in other software; an iterative fit stops at its own convergence criterion; a
# bootstrap bound is drawn from other random resamples in R.
RULES: dict[str, float] = {
    "closed_form": 1e-8,
    # A p-value both compute from a published approximation, with their own
    # normal quantiles in it (Shapiro-Wilk's: scipy AS 111, R qnorm).
    "approximation": 1e-6,
    # A figure of times the export rounds: seconds to 0.1 s (figures in
    # minutes), days to 0.1 day. A mean moves by at most half a step, an SD by
    # at most sqrt(n / (n - 1)) half steps: one whole step bounds both.
    "rounded_seconds": 0.1 / 60,
    "rounded_days": 0.1,
    "chi_square": 1e-3,
    "iterative": 1e-4,
    "bootstrap": 0.05,
}


@dataclass(frozen=True)
class RSection:
    # A short name, also the heading of the section in the script.
    key: str
    # The R code: a file beside the section's module.
    script: Path
    # Whether the report holds the figures this section recomputes.
    applies: Callable[[Mapping[str, Any]], bool]
    # (pattern, rule): the report's figures the section recomputes, as dotted
    # paths into the report's JSON ("*" stands for one key), each with its rule.
    figures: tuple[tuple[str, str], ...]
    # The study's settings the R code reads, as R variables: name -> (value, comment).
    parameters: Callable[[Mapping[str, Any]], dict[str, tuple[Any, str]]] = lambda _data: {}
    # The R packages the code loads, besides jsonlite.
    packages: tuple[str, ...] = ()
    # More files of data/ (name -> text), for the section's own tables; given
    # the study, the export's dataset (its session numbers) and the report.
    data_files: Callable[..., dict[str, str]] | None = field(default=None)


_paths: list[str] = []
_file_makers: list[str] = []
_report_filters: list[str] = []


def register_r_section(path: str) -> None:
    """Add the RSection at `path` to every replication package; again changes nothing."""
    if path not in _paths:
        _paths.append(path)


def r_sections() -> tuple[RSection, ...]:
    """The registered sections, in the order they were registered (a path may
    name one RSection or a tuple of them)."""
    found: list[RSection] = []
    for path in _paths:
        registered = import_string(path)
        found.extend(registered if isinstance(registered, tuple) else (registered,))
    return tuple(found)


def applying_sections(report: Mapping[str, Any]) -> tuple[RSection, ...]:
    """The sections whose figures the report holds: only what the data support."""
    return tuple(section for section in r_sections() if section.applies(report))


def register_report_filter(path: str) -> None:
    """Add the filter at `path`: (study, report) -> report, applied to the report before
    the package holds it. An app whose section shows a name the data tables
    replace by a pseudonym (the criterion study's annotators) registers one,
    so that the package names nobody."""
    if path not in _report_filters:
        _report_filters.append(path)


def filtered_report(study, report: dict) -> dict:
    for path in _report_filters:
        report = import_string(path)(study, report)
    return report


def register_package_files(path: str) -> None:
    """Add the maker of more files of the package at `path`: (study, dataset,
    report) -> {name in the package: text}. The apps above exports add theirs
    this way (the criterion app: the pre-registration)."""
    if path not in _file_makers:
        _file_makers.append(path)


def file_makers() -> list[Callable[..., dict[str, str]]]:
    return [import_string(path) for path in _file_makers]
