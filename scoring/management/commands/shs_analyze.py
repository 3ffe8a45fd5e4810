"""shs_analyze IN.csv -o REPORT.json [--html REPORT.html] (docs/design.md §9.3)."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand
from django.utils import translation

from scoring.analysis import SMALL_SAMPLE_N, analyze
from scoring.instruments.common import LANGUAGES
from scoring.management.answers import input_record, load_answers, write_outputs
from scoring.readable import readable_warnings


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    help = (
        "The psychometric analysis (docs/design.md §8) of a CSV or XLSX file with columns "
        "q1..q10, as JSON; --html adds the readable report with plots. Any invalid row "
        "stops the command and nothing is written, unless --skip-invalid is given."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("input", help="CSV (UTF-8; ',' ';' or tab) or XLSX file")
        parser.add_argument("-o", "--output", required=True, help="the JSON report to write")
        parser.add_argument("--html", help="also write the HTML report with plots here")
        parser.add_argument(
            "--language",
            choices=LANGUAGES,
            default="en",
            help="language of item text and labels in the HTML report (default en)",
        )
        parser.add_argument("--title", default="", help="title of the HTML report")
        parser.add_argument(
            "--skip-invalid",
            action="store_true",
            help="analyse the valid rows and report the invalid ones instead of stopping; "
            "the report states how many rows were left out and why",
        )
        parser.add_argument(
            "--small-sample",
            type=_positive,
            default=SMALL_SAMPLE_N,
            metavar="N",
            help="below N evaluations, alpha, correlations and normality tests carry a "
            f"caution (default {SMALL_SAMPLE_N}, the paper's 'at least 30 users')",
        )

    def handle(self, *args, input, output, html, language, title, skip_invalid, **options):
        table, parsed = load_answers(input, skip_invalid=skip_invalid, stderr=self.stderr)
        result = analyze(parsed.answers, small_sample_n=options["small_sample"])
        result["input"] = input_record(input, table, parsed)
        report = json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        outputs = [(output, report.encode("utf-8"))]
        if html:
            from scoring.report import render_analysis_html  # matplotlib only when asked

            page = render_analysis_html(
                result,
                parsed.answers,
                language=language,
                title=title,
                source=Path(input).name,
            )
            outputs.append((html, page.encode("utf-8")))
        # Everything is rendered before the first file is written, so a failure
        # to render leaves no report behind, not even a partial one.
        write_outputs(outputs)
        # Notes name each figure as the report does, not by its JSON key.
        with translation.override(language):
            for warning in readable_warnings(result["warnings"]):
                self.stderr.write(f"note: {warning['figure']}: {warning['reason']}")
        self.stdout.write(
            f"analysed {result['n']} evaluations; wrote {', '.join(path for path, _ in outputs)}"
        )
