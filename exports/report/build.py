"""The study report job: collect the figures, draw the plots, write one
self-contained HTML file, and return the same data for the study page."""

from datetime import datetime
from pathlib import Path

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.safestring import mark_safe

from exports.about import instrument_notes
from exports.progress import Progress
from exports.report.data import collect
from exports.report.figures import report_figures
from exports.report.localize import localized
from exports.report.sections import build_sections, report_sections
from scoring.instruments.shs import DIMENSIONS, INSTRUMENT_VERSION, ITEMS
from scoring.stats.reliability.analysis import DIMENSION_PAIRS, MIN_EVALUATIONS
from surveys.models import Study

# The analysis' stylesheet first: the study report's own rules come after it.
REPORT_CSS = ("scoring/report.css", "exports/report.css")


def build_report(
    study: Study, progress: Progress, language: str = "en", as_of: datetime | None = None
) -> dict:
    """Everything the report shows, JSON-safe (figures as data: URIs).

    The study page renders the copy stored with the job (report_data), so a
    report computed before an upgrade must still render: add keys, never rename.
    Texts are stored in English and translated when rendered (localize.py);
    the figures are drawn in `language`, the language the report was asked in.
    `as_of` (now by default) fixes the moment whose data it counts: the
    replication package builds its data and its report at one moment.
    """
    data, answers = collect(study, as_of)
    progress.advance()
    analysis = data["analysis"]
    data.update(
        study={
            "title": study.title,
            "prompting_regime": study.prompting_regime,
            "min_verified_prompts": study.min_verified_prompts,
            "min_glatteis_prompts": study.min_glatteis_prompts,
            "protocol": study.protocol,
            "min_turns": study.min_turns,
            "min_minutes": study.min_minutes,
        },
        generated=timezone.localdate().isoformat(),
        instrument_version=INSTRUMENT_VERSION,
        min_evaluations=MIN_EVALUATIONS,
        items=_item_rows(analysis),
        dimensions=_dimension_rows(analysis),
        table6=_correlation_table(analysis),
        **instrument_notes(),
    )
    # The sections of the apps above exports (criterion, validation), as of
    # the report's moment: each registers itself (exports.report.sections).
    as_of = datetime.fromisoformat(data["as_of"])
    data.update(build_sections(study, data, as_of, advance=progress.advance, language=language))
    with translation.override(language):
        data["figures"] = report_figures(localized(data, language), answers, language)
    progress.advance()
    return data


def write_report(*, study: Study, path: Path, progress: Progress, language: str = "en") -> dict:
    # Three steps of the report's own, and those of the registered sections.
    progress.expect(3 + sum(section.progress_steps for section in report_sections()))
    data = build_report(study, progress, language)
    path.write_text(render_report_file(data, language), encoding="utf-8")
    progress.advance()
    return data


def render_report_file(data: dict, language: str = "en") -> str:
    """A complete HTML document: styles inline, images as data: URIs, no server needed."""
    with translation.override(language):
        return render_to_string(
            "exports/report/standalone.html",
            {"report": localized(data, language), "language": language, "css": report_css()},
        )


def report_css():
    """The report's stylesheets, inlined: the file must render without a server."""
    found = [finders.find(name) for name in REPORT_CSS]
    return mark_safe("\n".join(Path(path).read_text(encoding="utf-8") for path in found if path))


def _item_rows(analysis: dict) -> list[dict]:
    return [
        {
            "key": item.key,
            "number": item.number,
            "dimension": item.dimension,
            "polarity": "+" if item.polarity > 0 else "−",
            "text": item.text["en"],
            "item_total": analysis["item_total"][item.key],
            "alpha_if_deleted": analysis["alpha_if_deleted"][item.key],
            "agreement": analysis["item_agreement"][item.key],
        }
        for item in ITEMS
    ]


def _dimension_rows(analysis: dict) -> list[dict]:
    return [
        {
            "key": d.key,
            "label": d.label["en"],
            "mean": analysis["dimension_profile"][d.key]["mean"],
            "sd": analysis["dimension_profile"][d.key]["sd"],
            "consistent_share": analysis["consistent_share"][d.key],
            "paired_item_r": analysis["paired_item_r"][d.key],
            "paired_item_p": analysis.get("paired_item_p", {}).get(d.key),
        }
        for d in DIMENSIONS
    ]


def _correlation_table(analysis: dict) -> list[dict]:
    """Paper Table 6: lower triangle of the inter-dimension correlations."""
    pairs = {}
    for first, second in DIMENSION_PAIRS:
        figures = analysis["dimension_correlations"][f"{first}-{second}"]
        pairs[(first, second)] = pairs[(second, first)] = figures
    rows = []
    for i, row_dim in enumerate(DIMENSIONS):
        cells: list[dict[str, object]] = []
        for j, column_dim in enumerate(DIMENSIONS):
            if j > i:
                cells.append({"blank": True})
            elif j == i:
                cells.append({"r": 1.0, "p": None, "diagonal": True})
            else:
                cells.append(pairs[(row_dim.key, column_dim.key)])
        rows.append({"key": row_dim.key, "label": row_dim.label["en"], "cells": cells})
    return rows
