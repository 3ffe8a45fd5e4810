"""shs_criterion STUDY -o REPORT.json [--html REPORT.html] (docs/design/criterion.md §13.3)."""

import json

from django.core.management.base import BaseCommand, CommandError

from criterion.page import verdict_text
from criterion.report import criterion_report
from scoring.instruments.common import LANGUAGES
from scoring.management.answers import write_outputs
from surveys.models import Study


class Command(BaseCommand):
    help = (
        "The criterion-validity analysis of paper section 8.2 for one study: the frozen "
        "pre-registration, annotator agreement, H1-H3 (unclustered and participant-clustered), "
        "the falsification verdict and the joint-use table of section 9.2, as JSON; --html "
        "adds the same figures as a readable page. The study report shows the same."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id or slug")
        parser.add_argument("-o", "--output", required=True, help="the JSON report to write")
        parser.add_argument("--html", help="also write the figures as an HTML page here")
        parser.add_argument("--language", choices=LANGUAGES, default="en")

    def handle(self, *args, study, output, html, language, **options):
        lookup = {"pk": int(study)} if study.isdigit() else {"slug": study}
        found = Study.objects.filter(**lookup).first()
        if found is None:
            raise CommandError(f"no study {study!r}")
        report = criterion_report(found, language=language)
        text = json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        outputs = [(output, text.encode("utf-8"))]
        if html:
            from criterion.page import render_criterion_page

            page = render_criterion_page(found, report, language)
            outputs.append((html, page.encode("utf-8")))
        # Rendered whole before anything is written: a failure leaves no partial report.
        write_outputs(outputs)
        self.stdout.write(
            f"Wrote {output}: {report['analysis']['counts']['n_evaluations']} evaluations."
        )
        self.stdout.write(verdict_text(report["analysis"]["falsification"], language))
