"""Delete panel ids older than their study's retention days (docs/design/remote.md §11.6).

Celery beat runs the same purge hourly; this command is for sites without beat.
"""

from django.core.management.base import BaseCommand

from surveys.panel import panel_ids_purge


class Command(BaseCommand):
    help = "Delete panel ids older than their study's retention days."

    def handle(self, *args, **options):
        deleted = panel_ids_purge()
        self.stdout.write(self.style.SUCCESS(f"{deleted} panel id(s) deleted"))
