"""The criterion figures as a page of their own, for `shs_criterion --html`:
the same partial the study report includes, with the report's styles inline."""

from django.template.loader import render_to_string
from django.utils import translation

from exports.report.build import report_css


def render_criterion_page(study, report: dict, language: str = "en") -> str:
    with translation.override(language):
        return render_to_string(
            "criterion/standalone.html",
            {"study": study, "criterion": report, "language": language, "css": report_css()},
        )
