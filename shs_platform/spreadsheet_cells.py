"""Spreadsheet cells that run nothing (docs/design/anonymisation.md §6.4): the
exports' CSV and XLSX writers and the audit log's CSV share these rules, so
the platform is here, on the floor under every app that writes a sheet."""

import re

# Formula injection (docs/design/anonymisation.md §6.4): a spreadsheet runs a cell starting with one
# of these characters as a formula, unless the cell is a plain number.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def looks_like_formula(text: str) -> bool:
    return text.startswith(FORMULA_TRIGGERS) and not _NUMBER.match(text)


# A CSV opened with another separator than its own (a German, Austrian or French
# spreadsheet splits on ";") breaks a text field at any ",", ";" or tab, and a
# row at a line break, whatever the quotes say: each piece becomes a cell, and a
# piece starting a formula (after spaces or stray quotes) is run.
SEPARATORS = ",;\t\r\n"
_PIECE_FORMULA = re.compile(r'(?<=[,;\t\r\n])([ "]*)([=+\-@][^,;\t\r\n]*)')
# Either kind of risk, found in one pass (CSV writers test every text cell).
RISKY_TEXT = re.compile(r'^[=+\-@\t\r]|[,;\t\r\n][ "]*[=+\-@]')


def _quote_piece(match: re.Match) -> str:
    spaces, piece = match.groups()
    return match[0] if _NUMBER.match(piece) else f"'{spaces}{piece}"


def neutralize(value: object) -> object:
    """For text formats (CSV): a leading single quote makes spreadsheets show text.

    Excel, LibreOffice and Google Sheets all treat a leading apostrophe as
    "this is text". The text gets one in front, and so does every piece after a
    separator of any common locale that would start a formula, because the
    reader may split there (see SEPARATORS). Non-string values pass through
    unchanged.
    """
    if not isinstance(value, str):
        return value
    if looks_like_formula(value):
        value = "'" + value
    return _PIECE_FORMULA.sub(_quote_piece, value)
