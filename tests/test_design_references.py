"""The design document lives in the repository: code cites docs/design.md, and
every citation names a section that exists.

Comments, docstrings and tests once cited sections of a specification kept
outside the repository. A reader of the code could not look those up, so such
citations now fail here, and every `design.md §N` / `design.md §N.M` citation
must name a numbered heading of docs/design.md.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "docs" / "design.md"
SCANNED_FOLDERS = (
    "shs_platform",
    "surveys",
    "scoring",
    "exports",
    "templates",
    "tests",
    "scripts",
    "static",
    "docs",
)
SCANNED_FILES = ("README.md", "pyproject.toml", "Makefile")
SKIPPED_FOLDERS = {"__pycache__", "node_modules", ".pytest_cache"}
LARGEST_TEXT_FILE = 2_000_000  # bytes; anything larger is data, not prose

# The outside document by name, followed by a section number or the word
# "section" (with or without §). The name must stand alone: an identifier such
# as ANALYSIS_KEYS or a lower-case "spec" is not a citation.
OUTSIDE_CITATION = re.compile(
    r"\bSPEC(?:\.md)?\b[ \t]*(?:§[ \t]*)?(?:(?i:section)\b|\d+(?:\.\d+)*)"
)
DESIGN_CITATION = re.compile(r"design\.md[ \t]*§[ \t]*(\d+(?:\.\d+)?)")
# Inside design.md a section points to another as a bare "§N.M".
SECTION_SIGN = re.compile(r"§[ \t]*(\d+(?:\.\d+)?)")
HEADING = re.compile(r"^(#{2,3})[ \t]+(\d+(?:\.\d+)?)\.?[ \t]+\S", re.MULTILINE)


def text_files():
    """(path relative to the repository, text) of every scanned text file."""
    candidates = [ROOT / name for name in SCANNED_FILES]
    for folder in SCANNED_FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if not SKIPPED_FOLDERS.intersection(path.relative_to(ROOT).parts):
                candidates.append(path)
    for path in candidates:
        if not path.is_file() or path.stat().st_size > LARGEST_TEXT_FILE:
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        yield path.relative_to(ROOT).as_posix(), text


def line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def outside_citations(name: str, text: str) -> list[str]:
    return [
        f"{name}:{line_of(text, match.start())}: {match.group(0)!r}"
        for match in OUTSIDE_CITATION.finditer(text)
    ]


def heading_numbers(design_text: str) -> list[str]:
    return [match.group(2) for match in HEADING.finditer(design_text)]


def unresolved(name: str, text: str, pattern: re.Pattern, sections: set[str]) -> list[str]:
    return [
        f"{name}:{line_of(text, match.start())}: §{match.group(1)}"
        for match in pattern.finditer(text)
        if match.group(1) not in sections
    ]


@pytest.fixture(scope="module")
def design_text() -> str:
    return DESIGN.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def files() -> list[tuple[str, str]]:
    return list(text_files())


def test_the_pattern_finds_citations_of_the_outside_document_and_nothing_else():
    name = "SP" + "EC"  # spelled apart, so that this file does not cite it
    for cited in (f"({name} 5)", f"{name} 2.1", f"{name} section 4", f"{name}.md §3", f"{name} §6"):
        assert outside_citations("x", cited), cited
    for other in (f"{name}_KEYS = {{", f"the {name} keys", "spec 2.1", f"{name}IFIC 3"):
        assert not outside_citations("x", other), other


def test_the_scan_reaches_the_apps_templates_tests_and_scripts(files):
    folders = {name.split("/")[0] for name, _text in files}
    assert {"shs_platform", "surveys", "scoring", "exports", "templates", "tests", "scripts"} <= (
        folders
    )
    assert "tests/test_design_references.py" in {name for name, _text in files}


def test_no_file_cites_the_specification_outside_the_repository(files):
    found = [citation for name, text in files for citation in outside_citations(name, text)]
    assert not found, (
        "cite docs/design.md (e.g. 'docs/design.md §4.2') instead of the outside "
        "specification:\n" + "\n".join(found)
    )


def test_design_headings_are_numbered_once_each(design_text):
    numbers = heading_numbers(design_text)
    assert numbers, "docs/design.md has no numbered '## N.' / '### N.M' headings"
    assert len(numbers) == len(set(numbers)), sorted(n for n in numbers if numbers.count(n) > 1)
    for number in numbers:
        if "." in number:  # a subsection sits under its section
            assert number.split(".")[0] in numbers, number


def test_a_citation_of_a_missing_section_is_reported(design_text):
    sections = set(heading_numbers(design_text))
    missing = "§" + "99.1"  # spelled apart, so that the scan of this file passes
    text = f"see docs/design.md §4.2 and docs/design.md {missing}."
    assert unresolved("x", text, DESIGN_CITATION, sections) == ["x:1: §99.1"]


def test_every_design_citation_names_an_existing_section(files, design_text):
    sections = set(heading_numbers(design_text))
    broken = [
        problem
        for name, text in files
        for problem in unresolved(name, text, DESIGN_CITATION, sections)
    ]
    broken += unresolved("docs/design.md", design_text, SECTION_SIGN, sections)
    assert not broken, "citations of sections docs/design.md does not have:\n" + "\n".join(broken)
