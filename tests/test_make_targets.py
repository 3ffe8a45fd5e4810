"""The Makefile's check targets run what CI relies on, and CI runs them by name."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def recipe(target: str) -> str:
    """What `make TARGET` would run (make -n prints it without running it)."""
    return subprocess.run(
        ["make", "-n", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.parametrize(
    ("target", "command"),
    [
        ("migrations-check", "manage.py makemigrations --check --dry-run"),
        ("deploy-check", "manage.py check --deploy --fail-level WARNING"),
    ],
)
def test_a_check_target_runs_its_check_and_ci_runs_the_target(target, command):
    assert command in recipe(target)
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"\nmake {target}\n" in ci_script
    assert command not in ci_script  # one place to change it


def test_the_deploy_check_uses_production_settings():
    commands = recipe("deploy-check")
    for setting in ("DEBUG=0", "SECRET_KEY=", "ALLOWED_HOSTS=shs.example.org"):
        assert setting in commands
