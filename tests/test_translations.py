"""Every translation keeps the placeholders of its source text.

The catalogues are compiled with polib (`compile_translations`), which skips
the format check of GNU msgfmt: a translation with `%(studie)s` for
`%(study)s` compiles silently and fails only when the page renders it (a
KeyError, or a placeholder left in the text). This test runs in `make test`:
it checks every entry of every catalogue itself, and also runs
`msgfmt --check-format` where gettext is installed.
"""

import re
import shutil
import subprocess
from pathlib import Path
from string import Formatter

import polib
import pytest

ROOT = Path(__file__).resolve().parent.parent
CATALOGUES = sorted((ROOT / "locale").glob("*/LC_MESSAGES/*.po"))

# A printf-style directive as Python's % operator reads it: an optional
# (name), flags, width, precision, a length modifier Python ignores, the type.
_DIRECTIVE = re.compile(
    r"%(?:\((?P<name>[^)]*)\))?[#0\- +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?(?P<type>.?)", re.S
)
# Types that take the same argument are interchangeable, as for msgfmt.
_TYPE_KINDS = {
    **dict.fromkeys("diouxX", "integer"),
    **dict.fromkeys("eEfFgG", "float"),
    "c": "character",
    "s": "string",
    "r": "any",
    "a": "any",
}
_NAMED = re.compile(r"%\([^)]*\)")


def percent_placeholders(text: str) -> list[tuple[str | None, str]]:
    """(name or None, kind) of each %-directive; ValueError for a malformed one."""
    placeholders = []
    for match in _DIRECTIVE.finditer(text):
        if match["type"] == "%" and match["name"] is None:
            continue  # "%%", a literal percent sign
        kind = _TYPE_KINDS.get(match["type"])
        if kind is None:
            raise ValueError(f"malformed directive {match[0]!r}")
        placeholders.append((match["name"], kind))
    return placeholders


def brace_placeholders(text: str) -> list[tuple[str | None, str]]:
    """(field name, "brace") of each {field}; ValueError for unbalanced braces."""
    fields = [field for _, field, _, _ in Formatter().parse(text) if field is not None]
    return [(re.split(r"[.\[]", field)[0], "brace") for field in fields]


def _compare(source: str, translation: str, parse, *, may_omit: bool) -> list[str]:
    try:
        expected = parse(source)
    except ValueError:
        return []  # the source itself is no format string; nothing to keep
    try:
        found = parse(translation)
    except ValueError as error:
        return [str(error)]
    if any(name is None for name, _ in expected + found):
        # Positional directives: the same kinds in the same order.
        return [] if found == expected or (may_omit and not found) else [f"{found} != {expected}"]
    kinds = dict(expected)
    problems = [f"{name!r} is not in the source" for name, _ in found if name not in kinds]
    problems += [
        f"{name!r} is a {kind}, the source's a {kinds[name]}"
        for name, kind in found
        if name in kinds and kind != kinds[name]
    ]
    if not may_omit:
        names = {name for name, _ in found}
        problems += [f"{name!r} is missing" for name in kinds if name not in names]
    return problems


def _parsers(entry: polib.POEntry) -> list:
    if "no-python-format" in entry.flags:
        return []
    parsers = []
    # makemessages flags a string as python-format; a hand-added entry may lack
    # the flag (msgfmt then skips it), but a %(name)s makes it one all the same.
    if "python-format" in entry.flags or _NAMED.search(entry.msgid):
        parsers.append(percent_placeholders)
    if "python-brace-format" in entry.flags:
        parsers.append(brace_placeholders)
    return parsers


def placeholder_problems(path: Path) -> list[str]:
    """One line for each translation whose placeholders differ from its source's."""
    problems = []
    for entry in polib.pofile(str(path)):
        if entry.obsolete:
            continue
        if entry.msgid_plural:
            # A plural form may leave the number out ("one evaluation").
            pairs = [
                (entry.msgid if index == 0 else entry.msgid_plural, text, True)
                for index, text in sorted(entry.msgstr_plural.items())
            ]
        else:
            pairs = [(entry.msgid, entry.msgstr, False)]
        for parse in _parsers(entry):
            for source, translation, may_omit in pairs:
                if not translation:
                    continue  # untranslated: test_every_ui_string_is_translated
                found = _compare(source, translation, parse, may_omit=may_omit)
                if found:
                    where = f"{path.name}:{entry.linenum}: {entry.msgid[:50]!r}"
                    problems.append(f"{where}: {'; '.join(found)}")
    return problems


def msgfmt_problems(path: Path) -> list[str]:
    """GNU msgfmt's own format check, where gettext is installed."""
    msgfmt = shutil.which("msgfmt")
    if msgfmt is None:
        return []
    checked = subprocess.run(
        [msgfmt, "--check-format", "-o", "/dev/null", str(path)],
        capture_output=True,
        text=True,
    )
    return [] if checked.returncode == 0 else checked.stderr.strip().splitlines()


def test_there_are_catalogues_to_check():
    assert {path.parts[-3] for path in CATALOGUES} >= {"de", "fr"}


@pytest.mark.parametrize("path", CATALOGUES, ids=lambda path: path.parts[-3])
def test_every_translation_keeps_the_placeholders_of_its_source(path):
    assert placeholder_problems(path) + msgfmt_problems(path) == []


HEADER = """msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\\n"

"""
SOUND = """#, python-format
msgid "Invitation to %(study)s"
msgstr "Einladung zu %(study)s"

#, python-brace-format
msgid "needs at least {needed} evaluations, got {n}"
msgstr "braucht mindestens {needed} Bewertungen, hat {n}"

#, python-format
msgid "%(n)s evaluation"
msgid_plural "%(n)s evaluations"
msgstr[0] "eine Bewertung"
msgstr[1] "%(n)s Bewertungen"

#, python-format
msgid "%(share)d%% agreed"
msgstr "%(share)d %% Zustimmung"
"""
INVITATION = '#, python-format\nmsgid "Invitation to %(study)s"\n'
BROKEN = {
    "renamed": INVITATION + 'msgstr "Einladung zu %(studie)s"\n',
    "no type": INVITATION + 'msgstr "Einladung zu %(study)"\n',
    "other type": INVITATION + 'msgstr "Einladung zu %(study)d"\n',
    "dropped": INVITATION + 'msgstr "Einladung zu (study)s"\n',
    "unflagged": 'msgid "Invitation to %(study)s"\nmsgstr "Einladung zu %(studie)s"\n',
    "plural": (
        '#, python-format\nmsgid "%(n)s evaluation"\nmsgid_plural "%(n)s evaluations"\n'
        'msgstr[0] "eine Bewertung"\nmsgstr[1] "%(count)s Bewertungen"\n'
    ),
    "brace": (
        '#, python-brace-format\nmsgid "needs at least {needed} evaluations, got {n}"\n'
        'msgstr "braucht mindestens {benötigt} Bewertungen, hat {n}"\n'
    ),
    "positional": '#, python-format\nmsgid "%s of %d"\nmsgstr "%d von %s"\n',
}


def test_a_sound_catalogue_passes(tmp_path):
    path = tmp_path / "django.po"
    path.write_text(HEADER + SOUND, encoding="utf-8")
    assert placeholder_problems(path) + msgfmt_problems(path) == []


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_placeholder_fails_the_check(tmp_path, case):
    path = tmp_path / "django.po"
    path.write_text(HEADER + SOUND + "\n" + BROKEN[case], encoding="utf-8")
    # polib compiles it without a word: this is what the check is for.
    polib.pofile(str(path)).save_as_mofile(str(tmp_path / "django.mo"))
    problems = placeholder_problems(path)
    assert len(problems) == 1
    assert problems[0].startswith("django.po:")
    if shutil.which("msgfmt") and case != "unflagged":  # msgfmt checks flagged entries only
        assert msgfmt_problems(path) != []
