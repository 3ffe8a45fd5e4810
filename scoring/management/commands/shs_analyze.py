"""shs_analyze IN.csv -o REPORT.json [--html REPORT.html] [validation flags]
(docs/design/command-line.md §9.3)."""

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import translation

from scoring.instruments.common import LANGUAGES
from scoring.management.answers import input_record, load_answers, write_outputs
from scoring.stats.caveats import SMALL_SAMPLE_N
from scoring.stats.reliability.analysis import analyze
from scoring.web.readable import readable_warnings


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


# The parts of the validation programme (docs/design/validation.md §14), each a flag.
VALIDATION_FLAGS = ("cfa", "invariance", "convergent", "retest", "nested", "validation")
VALIDATION_OPTIONS = ("group", "resamples", "seed")


class Command(BaseCommand):
    help = (
        "The psychometric analysis (docs/design/analysis.md §8) of a CSV or XLSX file with columns "
        "q1..q10, as JSON; --html adds the readable report with plots. Any invalid row "
        "stops the command and nothing is written, unless --skip-invalid is given."
    )
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
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
        self._add_validation_arguments(parser)

    def _add_validation_arguments(self, parser: CommandParser) -> None:
        group = parser.add_argument_group(
            "validation programme (docs/design/validation.md §14), "
            "added to the report as 'validation'"
        )
        group.add_argument("--cfa", action="store_true", help="confirmatory factor analysis")
        group.add_argument(
            "--invariance",
            action="store_true",
            help="measurement invariance across the languages of a 'language' column "
            "(two or more) and across --group",
        )
        group.add_argument("--group", metavar="COLUMN", help="the demographic column to compare")
        group.add_argument(
            "--convergent",
            action="store_true",
            help="convergent and discriminant validity against the companion scales' "
            "item columns (sus1..sus10, ...)",
        )
        group.add_argument(
            "--retest",
            metavar="FILE",
            help="the retest answers (participant_id, block or system, q1..q10, optional days)",
        )
        group.add_argument(
            "--nested",
            action="store_true",
            help="statistics that respect a participant's evaluations (participant_id column)",
        )
        group.add_argument(
            "--resamples", type=_positive, metavar="N", help="bootstrap resamples (default 2000)"
        )
        group.add_argument(
            "--seed", type=_non_negative, metavar="S", help="bootstrap seed (default 0)"
        )
        group.add_argument(
            "--validation", action="store_true", help="every part the file's columns support"
        )

    def handle(
        self,
        *args: Any,
        input: str,
        output: str,
        html: str | None,
        language: str,
        title: str,
        skip_invalid: bool,
        **options: Any,
    ) -> None:
        if any(options[flag] for flag in VALIDATION_FLAGS):
            # Only here: the model-fitting libraries take seconds to import.
            from scoring.management.validation_flags import analyse_validation, request

            table, parsed, validation, record, data = analyse_validation(
                request(options), path=input, skip_invalid=skip_invalid, stderr=self.stderr
            )
        else:
            for option in VALIDATION_OPTIONS:
                if options[option] is not None:
                    raise CommandError(
                        f"--{option} goes with the validation flags "
                        "(--invariance, --nested, --validation)",
                        returncode=2,
                    )
            table, parsed = load_answers(input, skip_invalid=skip_invalid, stderr=self.stderr)
            validation, data = None, None
        result = analyze(parsed.answers, small_sample_n=options["small_sample"])
        result["input"] = input_record(input, table, parsed)
        if validation is not None:
            result["input"]["validation"] = record
            result["validation"] = validation
        report = json.dumps(result, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        outputs = [(output, report.encode("utf-8"))]
        if html:
            page = _html_page(result, parsed.answers, data, language=language, title=title)
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


def _html_page(
    result: dict[str, Any], answers: Any, data: Any, *, language: str, title: str
) -> str:
    """The readable report; with the validation flags, the study report's
    validation section after the analysis, the retest's plot drawn from `data`."""
    # matplotlib only when asked
    from scoring.web.report import render_analysis_html, validation_section

    validation = result.get("validation")
    return render_analysis_html(
        result,
        answers,
        language=language,
        title=title,
        source=result["input"]["file"],
        validation=(
            validation_section(validation, data, language)
            if validation is not None and data is not None
            else None
        ),
    )
