"""System check: export files must never sit where the web server serves files."""

from pathlib import Path

from django.conf import settings
from django.core.checks import Error, register


def _served_folders() -> list[Path]:
    folders: list[str | Path] = [
        settings.STATIC_ROOT,
        *settings.STATICFILES_DIRS,
        settings.MEDIA_ROOT,
    ]
    return [Path(folder).resolve() for folder in folders if folder]


@register()
def private_storage_is_private(app_configs=None, **kwargs) -> list[Error]:
    root = Path(settings.PRIVATE_STORAGE_ROOT).resolve()
    errors = []
    for folder in _served_folders():
        if root == folder or root.is_relative_to(folder) or folder.is_relative_to(root):
            errors.append(
                Error(
                    f"PRIVATE_STORAGE_ROOT ({root}) overlaps the served folder {folder}.",
                    hint="Keep export files outside STATIC_ROOT, STATICFILES_DIRS and MEDIA_ROOT.",
                    id="exports.E001",
                )
            )
    return errors
