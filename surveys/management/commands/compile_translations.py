"""Compile the .po catalogues to .mo without GNU gettext (which `make run` may lack)."""

from pathlib import Path

import polib
from django.conf import settings
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Compile locale/*/LC_MESSAGES/*.po into .mo files using polib (no gettext needed)."

    def handle(self, *args, **options):
        compiled = 0
        for locale_dir in settings.LOCALE_PATHS:
            for po_path in sorted(Path(locale_dir).glob("*/LC_MESSAGES/*.po")):
                catalogue = polib.pofile(str(po_path))
                catalogue.save_as_mofile(str(po_path.with_suffix(".mo")))
                compiled += 1
                self.stdout.write(
                    f"compiled {po_path} ({catalogue.percent_translated()}% translated)"
                )
        self.stdout.write(self.style.SUCCESS(f"{compiled} catalogue(s) compiled"))
