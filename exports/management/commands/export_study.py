"""python manage.py export_study STUDY --format csv|xlsx|json|jsonl|sav|... -o FILE

Runs the same job as the web page (an ExportJob, the same task code), here
in this process, then copies the finished file to FILE. The job stays in the
study's export history, marked as started from the command line.
"""

import shutil

from django.core.management.base import BaseCommand, CommandError

from exports.models import ExportJob
from exports.runner import export_job_run
from exports.services import export_job_create
from surveys.models import Study

FORMATS = list(ExportJob.Format.values)


class Command(BaseCommand):
    help = "Export a study's anonymized data (or its report) to a file."

    def add_arguments(self, parser):
        parser.add_argument("study", help="study id or slug")
        parser.add_argument("--format", required=True, choices=FORMATS, dest="fmt")
        parser.add_argument("-o", "--output", required=True, help="file to write")
        parser.add_argument("--include-pilot", action="store_true")
        parser.add_argument("--include-free-text", action="store_true")

    def handle(self, *args, study, fmt, output, include_pilot, include_free_text, **options):
        if fmt in ExportJob.FREE_TEXT_FORMATS and not include_free_text:
            raise CommandError(
                f"The {fmt} export is free text as a whole: add --include-free-text."
            )
        # Not sent to the workers: this process runs the job itself.
        job = export_job_create(
            study=_find_study(study),
            requested_by=None,
            fmt=fmt,
            include_pilot=include_pilot,
            include_free_text=include_free_text,
            dispatch=False,
            note="started from the command line",
        )
        outcome = export_job_run(job_id=job.pk)
        job.refresh_from_db()
        if job.status != ExportJob.Status.SUCCEEDED:
            raise CommandError(job.error_message or f"export did not finish ({outcome})")
        shutil.copyfile(job.absolute_path, output)
        if job.include_free_text:
            self.stderr.write(
                "Warning: the file includes free text as typed; it can identify people. "
                "Read it before sharing."
            )
        self.stdout.write(f"Wrote {output} ({job.file_size} bytes, {job.get_format_display()}).")


def _find_study(value: str) -> Study:
    """By id, else by slug (a slug may be all digits)."""
    study = Study.objects.filter(pk=int(value)).first() if value.isdigit() else None
    study = study or Study.objects.filter(slug=value).first()
    if study is None:
        raise CommandError(f"No study with id or slug {value!r}.")
    return study
