from django.core.management.base import BaseCommand, CommandError

from surveys.models import Evaluation, Study
from surveys.simulation import SimulationError, simulate_study


class Command(BaseCommand):
    help = (
        "Run N simulated participants through the real protocol over HTTP (the same URLs, "
        "forms and validation a person uses), rotating among the study's experimenters, with "
        "answers and timings shaped like the SHS paper's study."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's id or slug")
        parser.add_argument("--participants", type=int, required=True)
        parser.add_argument("--seed", type=int, default=0)

    def handle(self, *args, study, participants, seed, **options):
        if participants < 1:
            raise CommandError("--participants must be at least 1")
        lookup = {"pk": int(study)} if study.isdigit() else {"slug": study}
        found = Study.objects.filter(**lookup).first()
        if found is None:
            raise CommandError(f"no study {study!r}")
        # Scoring runs in-process here so that the run ends with every evaluation scored,
        # whether or not a worker is listening.
        from shs_platform.celery import app

        app.conf.task_always_eager = True
        try:
            result = simulate_study(
                study=found,
                participants=participants,
                seed=seed,
            )
        except SimulationError as error:
            raise CommandError(str(error)) from error
        scored = Evaluation.objects.filter(session__study=found, scored_at__isnull=False).count()
        self.stdout.write(
            f"Created {result.sessions} sessions and {result.evaluations} evaluations "
            f"in {result.seconds:.1f} s ({scored} scored evaluations in the study)."
        )
        for name, count in sorted(result.per_system.items()):
            self.stdout.write(f"  {name}: {count}")
