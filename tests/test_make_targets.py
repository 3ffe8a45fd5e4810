"""The Makefile's check targets run what CI relies on, and CI runs them by name."""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def recipe(target: str, *variables: str) -> str:
    """What `make TARGET` would run (make -n prints it without running it),
    without the flags of a `make` this run may be inside."""
    outer = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
    return subprocess.run(
        ["make", "-n", target, *variables],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k not in outer},
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


def test_make_test_runs_on_every_core_and_ci_measures_coverage():
    def pytest_line(*variables: str) -> str:
        # The Makefile's defaults unless given: inside `make test COVERAGE=1`
        # the environment holds the outer make's.
        unset = ("COVERAGE=", "PYTEST_ARGS=", "PYTEST_WORKERS=auto")
        commands = recipe("test", *unset, *variables).splitlines()
        return next(line for line in commands if "-m pytest" in line)

    assert "-m pytest -n auto" in pytest_line()
    assert "--cov" not in pytest_line()
    assert "-m pytest -n auto --cov" in pytest_line("COVERAGE=1")
    # PYTEST_ARGS come last, so `-n0` among them runs in one process.
    assert pytest_line("PYTEST_ARGS=-n0 tests/llm").endswith("-n0 tests/llm")
    ci_script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test COVERAGE=1( |$)", ci_script, re.MULTILINE)


def test_the_deploy_check_uses_production_settings():
    commands = recipe("deploy-check")
    for setting in ("DEBUG=0", "SECRET_KEY=", "ALLOWED_HOSTS=shs.example.org"):
        assert setting in commands


def test_make_run_serves_the_demo_model_beside_runserver_and_stops_it_with_it():
    """The demo study's connected system talks to the shipped demo server
    (docs/design/transcripts.md §10.5): `make run` starts it on the port the seeded system
    points at, and the shell's trap ends it when runserver ends (or on Ctrl-C)."""
    commands = recipe("run")
    server = "-m llm.demo_server --host 127.0.0.1 --port 8001"
    assert server in commands
    assert "DEMO_LLM_URL=http://127.0.0.1:8001/v1" in commands  # what seed_demo stores
    line = next(line for line in commands.splitlines() if server in line)
    assert line.rstrip().endswith("& demo=$!; \\")
    assert "trap 'kill $demo 2>/dev/null' EXIT INT TERM" in commands
    assert commands.index(server) < commands.index("manage.py runserver")
    # Still service-free: SQLite and in-process tasks.
    assert "env -u DATABASE_URL -u REDIS_URL" in commands
