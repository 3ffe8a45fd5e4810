"""What the production image is made of, read from the Dockerfile, .dockerignore
and docker-compose.yml themselves, so that the tests stay in step with them.

This machine has no container engine: the tests run the same steps with the
test run's Python, in a copy of the build context.
"""

import fnmatch
import os
import re
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# The one build step of the image that the smoke test repeats; the Dockerfile
# must run exactly this (test_the_dockerfile_builds_with_the_tested_script).
BUILD_STEP = "sh scripts/build-static"
# The variables a deployment must set itself, with values fit for the tests.
OPERATOR_ENV = {"SECRET_KEY": "compose-test-" + "k" * 40 + "-not-a-real-production-secret"}

_VARIABLE = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\}")


def dockerfile_run_steps() -> list[str]:
    """The commands of the Dockerfile's RUN instructions, continuations joined."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    return [line[len("RUN ") :].strip() for line in text.splitlines() if line.startswith("RUN ")]


def _interpolate(value: str, given: dict[str, str]) -> str:
    """Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?error}` against `given`."""

    def substitute(match: re.Match) -> str:
        name, op, arg = match["name"], match["op"], match["arg"]
        value = given.get(name)
        if op == ":-":
            return value or arg
        if op == "-":
            return arg if value is None else value
        if op in (":?", "?") and not value:
            raise KeyError(f"compose requires {name}: {arg}")
        return value or ""

    return _VARIABLE.sub(substitute, value).replace("$$", "$")


def compose_service(name: str) -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"][name]


def compose_environment(given: dict[str, str] | None = None, service: str = "web") -> dict:
    """The service's environment as compose would pass it, with a .env holding `given`."""
    given = {**OPERATOR_ENV, **(given or {})}
    environment = compose_service(service)["environment"]
    return {name: _interpolate(str(value), given) for name, value in environment.items()}


def process_env(environment: dict[str, str]) -> dict[str, str]:
    """A process environment holding only `environment`, with this run's Python on PATH
    (the image's `python` and `gunicorn`)."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return {"PATH": path, "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8", **environment}


def _dockerignore_patterns() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip().strip("/") for line in lines if line.strip() and not line.startswith("#")]


def copy_build_context(destination: Path) -> Path:
    """Copy what `COPY . .` puts into the image: the tree less .dockerignore."""
    patterns = _dockerignore_patterns()

    def ignored(directory: str, names: list[str]) -> set[str]:
        relative = Path(directory).relative_to(ROOT)
        skip = set()
        for name in names:
            path = (relative / name).as_posix()
            for pattern in patterns:
                if pattern.startswith("**/"):
                    hit = fnmatch.fnmatch(name, pattern[3:])
                else:
                    hit = fnmatch.fnmatch(path, pattern)
                if hit:
                    skip.add(name)
        return skip

    shutil.copytree(ROOT, destination, ignore=ignored, symlinks=True)
    return destination
