"""python manage.py shs_score IN.csv -o OUT.csv [--skip-invalid]
(docs/design/command-line.md §9.2)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from scoring.answers.batch import replaced_columns, scored_csv
from scoring.management.answers import load_answers, write_outputs
from scoring.scores.engine import SCORE_COLUMNS, score_array


class Command(BaseCommand):
    help = (
        "Score a CSV or XLSX file with columns q1..q10 (answers -2..+2; other columns pass "
        f"through): adds {', '.join(SCORE_COLUMNS)}. Any invalid row stops the command "
        "and nothing is written, unless --skip-invalid is given."
    )
    # Pure file work: no database, so no system checks to wait for.
    requires_system_checks = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("input", help="CSV (UTF-8; ',' ';' or tab) or XLSX file")
        parser.add_argument("-o", "--output", required=True, help="the scored CSV to write")
        parser.add_argument(
            "--skip-invalid",
            action="store_true",
            help="write the valid rows and report the invalid ones instead of stopping",
        )

    def handle(
        self, *args: Any, input: str, output: str, skip_invalid: bool, **options: Any
    ) -> None:
        table, parsed = load_answers(input, skip_invalid=skip_invalid, stderr=self.stderr)
        replaced = [table.columns[index] for index in replaced_columns(table)]
        if replaced:
            self.stderr.write(f"recomputed the existing columns {', '.join(replaced)}")
        write_outputs([(output, scored_csv(table, parsed.valid, score_array(parsed.answers)))])
        self.stdout.write(f"scored {len(parsed.answers)} rows; wrote {output}")
