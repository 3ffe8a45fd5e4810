"""The measuring side of a benchmark, run in a fresh process of its own."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def child_figures(module: str, *args: str, env: dict, what: str) -> dict:
    """Run `python -m module args` with `env` and return the JSON figures it
    prints last; `what` names the measurement in an error."""
    completed = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "shs_platform.settings"},
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode:
        raise RuntimeError(f"{what} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])
