"""python manage.py audit_verify [--study ID]

Recomputes the audit log's hash chains (docs/design/audit.md §15.2): the
site's and every study's, or one study's. Names the first broken row of
each broken chain and exits with status 1 if any is broken.
"""

from django.core.management.base import BaseCommand, CommandError

from audit.models import study_chain
from audit.verify import chain_verify, chains


class Command(BaseCommand):
    help = "Check the audit log's hash chains; name the first broken row of each."

    def add_arguments(self, parser):
        parser.add_argument("--study", type=int, help="check only this study's chain (its id)")

    def handle(self, *args, study, **options):
        names = [study_chain(study)] if study is not None else chains()
        broken = 0
        for name in names:
            state = chain_verify(name)
            if state.intact:
                self.stdout.write(f"{name}: {state.rows} rows, intact")
                continue
            broken += 1
            self.stderr.write(
                f"{name}: BROKEN at row id {state.broken_id} "
                f"(row {state.rows} of the chain): it {state.problem}"
            )
        if broken:
            raise CommandError(f"{broken} of {len(names)} chains are broken", returncode=1)
        if not names:
            self.stdout.write("The audit log is empty.")
