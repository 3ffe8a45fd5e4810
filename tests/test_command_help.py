"""Every management command of the project answers --help (docs/design/command-line.md §9).

argparse formats each help text with `%`, so a bare percent sign in any of
them ("80% of the participants") crashes --help with a TypeError. The
commands are found, not listed: a new command is covered the day it is added.
"""

import importlib
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import get_commands, load_command_class


def _project_commands() -> list[tuple[str, str]]:
    """(app, command) of the commands that live in this repository, not in a library."""
    root = Path(settings.BASE_DIR).resolve()
    found = []
    for name, app in sorted(get_commands().items()):
        module = importlib.import_module(app)
        location = Path(module.__file__ or next(iter(module.__path__))).resolve()
        if location.is_relative_to(root) and ".venv" not in location.parts:
            found.append((app, name))
    return found


PROJECT_COMMANDS = _project_commands()


def test_the_projects_commands_are_found():
    names = {name for _, name in PROJECT_COMMANDS}
    # One of each app that has commands, so a broken discovery cannot pass by finding none.
    assert {"simulate_study", "seed_demo", "shs_analyze", "shs_criterion"} <= names
    assert "migrate" not in names


@pytest.mark.parametrize(("app", "name"), PROJECT_COMMANDS, ids=[n for _, n in PROJECT_COMMANDS])
def test_help_exits_cleanly(app, name, capsys):
    command = load_command_class(app, name)

    with pytest.raises(SystemExit) as exited:
        command.run_from_argv(["manage.py", name, "--help"])

    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage:") and f"manage.py {name}" in out
