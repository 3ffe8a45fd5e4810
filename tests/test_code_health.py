"""Size limits for the apps: a newcomer reads a module in one sitting and a
function on one screen.

Migrations are generated and exempt; tests are exempt from the function limit
(a scenario reads best in one piece) but not from anything else here.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APPS = (
    "shs_platform",
    "surveys",
    "scoring",
    "exports",
    "llm",
    "criterion",
    "validation",
    "simulation",
)
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def app_modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def functions(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


@pytest.mark.parametrize("path", list(app_modules()), ids=lambda p: str(p.relative_to(ROOT)))
def test_module_stays_readable(path):
    source = path.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= MAX_MODULE_LINES, "split it by what changes together"
    too_long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in functions(ast.parse(source))
        if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not too_long, f"functions over {MAX_FUNCTION_LINES} lines: {too_long}"
