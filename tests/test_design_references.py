"""The design lives in the repository, one page per subsystem in docs/design/,
and every citation of it names a section that is there.

Comments, docstrings and tests once cited sections of a specification kept
outside the repository. A reader of the code could not look those up, so such
citations fail here. A citation names the page and the section,
`docs/design/protocol.md §4.2`: the page must exist and hold that numbered
heading. Section numbers are unique across the pages. Inside the design a
bare `§N.M` names a section of the same page and `[§N.M](page.md)` one of
another page; the other documents link to the design the same way.

The documents stay short enough to read in one sitting: no page of docs/ is
longer than 500 lines, and the README no longer than 200.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DESIGN = DOCS / "design"
SCANNED_FOLDERS = (
    "shs_platform",
    "api",
    "audit",
    "surveys",
    "scoring",
    "exports",
    "criterion",
    "validation",
    "simulation",
    "llm",
    "templates",
    "tests",
    "scripts",
    "static",
    "docs",
    "deploy",
    ".ci",
)
SCANNED_FILES = (
    "README.md",
    "pyproject.toml",
    "Makefile",
    "Dockerfile",
    "docker-compose.yml",
)
SKIPPED_FOLDERS = {"__pycache__", "node_modules", ".pytest_cache"}
LARGEST_TEXT_FILE = 2_000_000  # bytes; anything larger is data, not prose
MOST_LINES = 500
MOST_README_LINES = 200

# The outside document by name, followed by a section number or the word
# "section" (with or without §). The name must stand alone: an identifier such
# as ANALYSIS_KEYS or a lower-case "spec" is not a citation.
OUTSIDE_CITATION = re.compile(
    r"\bSPEC(?:\.md)?\b[ \t]*(?:§[ \t]*)?(?:(?i:section)\b|\d+(?:\.\d+)*)"
)
# A design page by path, and the section cited after it, which may follow on
# the next line of a comment ("docs/design/remote.md\n    # §11.5").
PAGE = re.compile(r"docs/design/([\w-]+)\.md")
PAGE_CITATION = re.compile(
    r"docs/design/([\w-]+)\.md(?:[ \t]|\n[ \t]*(?:#|//|\*)?)*§[ \t]*(\d+(?:\.\d+)?)"
)
# The single file the design was once kept in, spelled apart so that this
# file does not cite it.
OLD_DESIGN_FILE = re.compile(r"\bdesign" + r"\.md\b")
# Inside a design page: a bare "§N.M", or a link "[§N.M](page.md)".
SECTION_SIGN = re.compile(r"(?<!\[)§[ \t]*(\d+(?:\.\d+)?)")
SECTION_LINK = re.compile(r"\[§[ \t]*(\d+(?:\.\d+)?)\]\(([^)#\s]+)(?:#[^)]*)?\)")
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


def heading_numbers(text: str) -> list[str]:
    return [match.group(2) for match in HEADING.finditer(text)]


def design_pages() -> dict[str, list[str]]:
    """Page name (without .md) -> the numbered headings on it."""
    return {
        path.stem: heading_numbers(path.read_text(encoding="utf-8"))
        for path in sorted(DESIGN.glob("*.md"))
    }


def unresolved_citations(name: str, text: str, pages: dict[str, list[str]]) -> list[str]:
    """Citations `docs/design/<page>.md §N.M` whose page or section is missing,
    and mentions of a design page that does not exist."""
    problems = []
    for match in PAGE_CITATION.finditer(text):
        page, number = match.groups()
        if page not in pages:
            problems.append(f"{name}:{line_of(text, match.start())}: no page {page}.md")
        elif number not in pages[page]:
            problems.append(f"{name}:{line_of(text, match.start())}: §{number} is not on {page}.md")
    for match in PAGE.finditer(text):
        if match.group(1) not in pages:
            problems.append(f"{name}:{line_of(text, match.start())}: no page {match.group(0)}")
    return sorted(set(problems))


def unresolved_links(name: str, text: str, folder: Path, pages: dict[str, list[str]]):
    """Links `[§N.M](page.md)` from a document in `folder` to a design page
    that does not hold section N.M."""
    problems = []
    for match in SECTION_LINK.finditer(text):
        number, target = match.groups()
        path = (folder / target).resolve()
        where = f"{name}:{line_of(text, match.start())}"
        if path.parent != DESIGN.resolve() or path.stem not in pages:
            problems.append(f"{where}: [§{number}]({target}) is no design page")
        elif number not in pages[path.stem]:
            problems.append(f"{where}: §{number} is not on {target}")
    return problems


def bare_sections_elsewhere(name: str, text: str, own: list[str]) -> list[str]:
    """Bare `§N.M` on a design page that names a section of another page."""
    return [
        f"{name}:{line_of(text, match.start())}: §{match.group(1)} is on another page; "
        "link it as [§N.M](page.md)"
        for match in SECTION_SIGN.finditer(text)
        if match.group(1) not in own
    ]


@pytest.fixture(scope="module")
def pages() -> dict[str, list[str]]:
    return design_pages()


@pytest.fixture(scope="module")
def files() -> list[tuple[str, str]]:
    return list(text_files())


def test_the_pattern_finds_citations_of_the_outside_document_and_nothing_else():
    name = "SP" + "EC"  # spelled apart, so that this file does not cite it
    for cited in (f"({name} 5)", f"{name} 2.1", f"{name} section 4", f"{name}.md §3", f"{name} §6"):
        assert outside_citations("x", cited), cited
    for other in (f"{name}_KEYS = {{", f"the {name} keys", "spec 2.1", f"{name}IFIC 3"):
        assert not outside_citations("x", other), other


def test_the_scan_reaches_every_app_the_templates_tests_and_scripts(files):
    folders = {name.split("/")[0] for name, _text in files}
    apps = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"shs_platform.egg-info"}
    assert apps <= set(SCANNED_FOLDERS), sorted(apps - set(SCANNED_FOLDERS))
    assert {"shs_platform", "surveys", "scoring", "exports", "templates", "tests", "scripts"} <= (
        folders
    )
    assert "tests/test_design_references.py" in {name for name, _text in files}


def test_no_file_cites_the_specification_outside_the_repository(files):
    found = [citation for name, text in files for citation in outside_citations(name, text)]
    assert not found, (
        "cite the design (e.g. 'docs/design/protocol.md §4.2') instead of the outside "
        "specification:\n" + "\n".join(found)
    )


def test_no_file_cites_the_single_design_file_it_was_split_from(files):
    found = [
        f"{name}:{line_of(text, match.start())}"
        for name, text in files
        for match in OLD_DESIGN_FILE.finditer(text)
    ]
    assert not found, (
        "the design is now docs/design/<page>.md (docs/design/index.md lists which page "
        "holds each section):\n" + "\n".join(found)
    )


def test_the_design_has_an_index_and_pages(pages):
    assert "index" in pages
    assert len([page for page in pages if page != "index"]) >= 10


def test_design_headings_are_numbered_once_each_across_the_pages(pages):
    numbers = [number for headings in pages.values() for number in headings]
    assert numbers, "docs/design/ has no numbered '## N.' / '### N.M' headings"
    assert len(numbers) == len(set(numbers)), sorted(n for n in numbers if numbers.count(n) > 1)
    for number in numbers:
        if "." in number:  # a subsection sits under its section, maybe on the page before
            assert number.split(".")[0] in numbers, number


def test_the_index_names_every_page(pages):
    index = (DESIGN / "index.md").read_text(encoding="utf-8")
    for page in pages:
        if page != "index":
            assert f"({page}.md)" in index, f"docs/design/index.md does not link {page}.md"


def test_a_citation_of_a_missing_page_or_section_is_reported(pages):
    page = next(name for name, headings in pages.items() if headings)
    first = pages[page][0]
    missing = "§" + "99.1"  # spelled apart, so that the scan of this file passes
    nowhere = "docs/design/" + "nowhere.md"  # spelled apart, as above
    text = (
        f"see docs/design/{page}.md §{first}, docs/design/{page}.md {missing} and\n"
        f"{nowhere} §{first}; docs/design/{page}.md\n    # §{first}."
    )
    assert unresolved_citations("x", text, pages) == sorted(
        {
            f"x:1: §99.1 is not on {page}.md",
            "x:2: no page nowhere.md",
            f"x:2: no page {nowhere}",
        }
    )


def test_every_design_citation_names_a_page_and_a_section_on_it(files, pages):
    broken = [
        problem for name, text in files for problem in unresolved_citations(name, text, pages)
    ]
    assert not broken, "citations of the design that do not resolve:\n" + "\n".join(broken)


def test_sections_inside_the_design_resolve(pages):
    broken = []
    for page, headings in pages.items():
        path = DESIGN / f"{page}.md"
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(ROOT).as_posix()
        if page != "index":
            broken += bare_sections_elsewhere(name, text, headings)
        broken += unresolved_links(name, text, DESIGN, pages)
    assert not broken, "sections the design names that are not there:\n" + "\n".join(broken)


def test_links_to_design_sections_from_other_documents_resolve(pages):
    documents = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    broken = [
        problem
        for path in documents
        if path.parent != DESIGN
        for problem in unresolved_links(
            path.relative_to(ROOT).as_posix(),
            path.read_text(encoding="utf-8"),
            path.parent,
            pages,
        )
    ]
    assert not broken, "links to design sections that are not there:\n" + "\n".join(broken)


def test_no_document_is_longer_than_one_sitting():
    documents = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
    too_long = []
    for path in documents:
        most = MOST_README_LINES if path.name == "README.md" and path.parent == ROOT else MOST_LINES
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > most:
            too_long.append(f"{path.relative_to(ROOT)}: {lines} lines (at most {most})")
    assert not too_long, "split these documents:\n" + "\n".join(too_long)


# A path a document names, such as `surveys/protocol/statements.py`.
NAMED_PATH = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|html|md|toml|yml|conf|R|js|css))`")


def missing_paths(name: str, text: str) -> list[str]:
    here = (ROOT / name).parent
    return [
        f"{name}:{line_of(text, match.start())}: {match.group(1)}"
        for match in NAMED_PATH.finditer(text)
        if not any((base / match.group(1)).exists() for base in (ROOT, here, ROOT / "docs"))
    ]


def test_a_named_path_that_is_gone_is_reported():
    assert missing_paths("docs/x.md", "see `surveys/gone.py` and `surveys/steps.py`") == [
        "docs/x.md:1: surveys/gone.py"
    ]


def test_every_file_the_documents_name_exists():
    # The benchmark history keeps what was measured then, removed files included.
    documents = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]
    current = [path for path in documents if "history" not in path.name]
    found = []
    for path in current:
        found += missing_paths(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))
    assert not found, "\n".join(found)
