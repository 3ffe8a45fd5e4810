"""The llm package's place in the house (STYLE.md): it knows chat messages and
endpoints, nothing of studies (the "apps: llm imports no Django and no app"
contract of pyproject.toml, checked by `make lint`); the demo server runs with
the standard library."""

import ast
import subprocess
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
def test_llm_modules_stay_readable(path):
    code_health.test_module_stays_readable(path)


def test_the_demo_server_needs_only_the_standard_library():
    outside = imported(code_health.ROOT / "llm" / "demo_server.py") - set(sys.stdlib_module_names)
    assert outside == set()


def test_the_client_runs_without_django():
    # Given a process that never loads Django, when the client checks a key
    # variable and a base URL under a policy it is handed
    script = (
        "import sys\n"
        "from llm import check, client, endpoints, keys, sse, transport, wire\n"
        "from llm.policy import CallPolicy\n"
        "policy = CallPolicy(key_prefix='LAB_KEY_', reserved_names=frozenset({'LAB_KEY_X'}))\n"
        "assert keys.is_allowed('LAB_KEY_A', 'study-a', policy=policy)\n"
        "assert not keys.is_allowed('LAB_KEY_X', 'study-a', policy=policy)\n"
        "endpoints.check_base_url('https://8.8.8.8/v1', policy=policy)\n"
        "assert 'django' not in sys.modules, 'llm loaded Django'\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script], cwd=code_health.ROOT, capture_output=True, text=True
    )
    # Then it works, and Django was never imported
    assert ran.returncode == 0, ran.stderr
