"""The newest openpyxl release on PyPI, installed once beside the project's
own (in .venv/.newest-openpyxl), for the test and the benchmark that check the
XLSX writer against it (exports/writers/sheetrows.py leans on its internals)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / ".venv" / ".newest-openpyxl"


def newest_openpyxl() -> Path:
    """The folder holding it (installed on first use); fails, saying why, when
    PyPI cannot be reached."""
    if (TARGET / "openpyxl").is_dir():
        return TARGET
    partial = TARGET.with_name(TARGET.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    # Only from the package index itself: not from a local mirror or wheel folder
    # that this machine's pip may also be set to look in, which can lag behind.
    env = {
        k: v for k, v in os.environ.items() if k not in ("PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS")
    }
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        + ["--no-cache-dir", "--target", str(partial), "openpyxl"],
        env={**env, "PIP_CONFIG_FILE": os.devnull},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if completed.returncode:
        raise RuntimeError(
            "could not install the newest openpyxl from PyPI (no network?): "
            f"pip exited with {completed.returncode}\n{completed.stderr[-2000:]}"
        )
    partial.rename(TARGET)
    return TARGET


def environment(database_suffix: str = "_newest_openpyxl") -> dict[str, str]:
    """This process's environment with the newest openpyxl first on the path, and
    a database of its own (a test run inside a test run must not share one)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(newest_openpyxl()), str(ROOT)])}
    url = urlsplit(env.get("DATABASE_URL", ""))
    if url.scheme.startswith("postgres"):
        env["DATABASE_URL"] = urlunsplit(url._replace(path=url.path + database_suffix))
    return env


def which_rows(env: dict[str, str]) -> dict:
    """The openpyxl a process with `env` imports, and whether the XLSX sheets use
    the rendered rows with it (sheetrows.RENDERED_ROWS)."""
    code = (
        "import json, os, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', "
        "'shs_platform.settings'); django.setup(); import openpyxl; "
        "from exports.writers import sheetrows; print(json.dumps({'version': "
        "openpyxl.__version__, 'path': openpyxl.__file__, 'rendered': sheetrows.RENDERED_ROWS}))"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if completed.returncode:
        raise RuntimeError(f"could not import the writer:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])
