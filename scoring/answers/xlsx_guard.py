"""Refusing XLSX zip bombs before openpyxl opens them.

An XLSX workbook is a zip of XML parts, and openpyxl inflates and parses
whole parts even in read-only mode (all shared strings at once): a 500 KB
upload whose sharedStrings.xml inflates to 200 MB held a worker for minutes
and took over a gigabyte. The zip's central directory declares every part's
compressed and uncompressed size, and reading it costs microseconds, so the
workbook is refused on those numbers alone. The declared size can be a lie,
but not a useful one: Python's zipfile (which openpyxl reads through) stops
inflating a part at its declared size and then fails its CRC check.

Django-free: the CLI (`shs_score`, `shs_analyze`) and the web uploads share it.
"""

from __future__ import annotations

import io
import zipfile

# Spreadsheet XML compresses well (repeated tags), ten to thirty times for
# ordinary sheets; deflate's best case is about a thousand. A part smaller
# than RATIO_FLOOR may have any ratio: it cannot cost much however it inflates.
MAX_RATIO = 100
RATIO_FLOOR = 1024 * 1024
# An upload of a few megabytes has no business inflating past this; the CLI,
# which reads files up to hundreds of megabytes, passes its own bound.
MAX_UNCOMPRESSED_BYTES = 100 * 1024 * 1024
# A workbook has a few dozen parts; thousands mean something else.
MAX_MEMBERS = 2000


class UnsafeWorkbook(ValueError):
    """The bytes are not a workbook openpyxl may safely open; the message says why."""


def check_workbook(
    data: bytes, name: str, *, max_uncompressed: int = MAX_UNCOMPRESSED_BYTES
) -> None:
    """Raise UnsafeWorkbook unless `data` is a zip whose parts inflate to a sane size."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError):
        raise UnsafeWorkbook(
            f"{name} cannot be read as an XLSX workbook (it is not a readable zip file)"
        ) from None
    if len(members) > MAX_MEMBERS:
        raise UnsafeWorkbook(f"{name} has {len(members):,} parts; a workbook has far fewer")
    total = 0
    for member in members:
        compressed = max(member.compress_size, 1)
        if member.file_size > RATIO_FLOOR and member.file_size / compressed > MAX_RATIO:
            raise UnsafeWorkbook(
                f"{name} is compressed {member.file_size // compressed:,} to 1 "
                f"({member.filename}); workbooks compress far less, so it is refused unread"
            )
        total += member.file_size
        if total > max_uncompressed:
            raise UnsafeWorkbook(
                f"{name} would inflate to more than {max_uncompressed // (1024 * 1024):,} MB "
                "when opened; it is refused unread"
            )
