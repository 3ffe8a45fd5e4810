"""The criterion figures as a page of their own, for `shs_criterion --html`:
the same partial the study report includes, with the report's styles inline."""

import re
from html import unescape

from django.template.loader import render_to_string
from django.utils import translation
from django.utils.html import strip_tags

from exports.report.build import report_css


def render_criterion_page(study, report: dict, language: str = "en") -> str:
    with translation.override(language):
        return render_to_string(
            "criterion/standalone.html",
            {"study": study, "criterion": report, "language": language, "css": report_css()},
        )


def verdict_text(falsification: dict, language: str = "en") -> str:
    """The falsification verdict as plain text, for the command line: the
    headline the report shows, in the same words, so the two cannot differ."""
    with translation.override(language):
        html = render_to_string("criterion/_falsification_headline.html", {"f": falsification})
    return re.sub(r"\s+", " ", unescape(strip_tags(html))).strip()
