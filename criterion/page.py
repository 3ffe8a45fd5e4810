"""The criterion figures as a page of their own, for `shs_criterion --html`:
the same partial the study report includes, with the report's styles inline."""

from pathlib import Path

from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.safestring import mark_safe

from exports.report.build import REPORT_CSS


def render_criterion_page(study, report: dict, language: str = "en") -> str:
    found = [finders.find(name) for name in REPORT_CSS]
    css = "\n".join(Path(path).read_text(encoding="utf-8") for path in found if path)
    with translation.override(language):
        return render_to_string(
            "criterion/standalone.html",
            {"study": study, "criterion": report, "language": language, "css": mark_safe(css)},
        )
