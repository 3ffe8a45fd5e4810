"""The llm package's place in the house (STYLE.md): it knows chat messages and
endpoints, nothing of studies; the demo server runs with the standard library."""

import ast
import sys
from pathlib import Path

import pytest

from tests import test_code_health as code_health

MODULES = sorted((code_health.ROOT / "llm").glob("*.py"))


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_llm_imports_nothing_of_the_study(path):
    assert not imported(path) & {"surveys", "scoring", "exports"}


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_llm_modules_stay_readable(path):
    code_health.test_module_stays_readable(path)


def test_the_demo_server_needs_only_the_standard_library():
    outside = imported(code_health.ROOT / "llm" / "demo_server.py") - set(sys.stdlib_module_names)
    assert outside == set()
