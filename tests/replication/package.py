"""Replication packages of simulated studies, and their R script run on them:
the package as `export_study --format replication` writes it, unpacked into
a folder, and what `Rscript analysis/analysis.R` printed there."""

import io
import json
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

from django.core.management import call_command

# R with lavaan fits several models: generous, but a hung script fails the test.
R_SECONDS = 600


@dataclass
class Run:
    returncode: int
    output: str
    results: dict | None


def export_package(study, folder: Path) -> Path:
    """The study's replication package, unpacked into `folder`."""
    archive = folder.with_suffix(".zip")
    call_command(
        "export_study", study.slug, "--format", "replication", "-o", str(archive),
        stdout=io.StringIO(),
    )  # fmt: skip
    with zipfile.ZipFile(archive) as package:
        package.extractall(folder)
    return folder


def run_r(folder: Path) -> Run:
    """`Rscript analysis/analysis.R` in the package's folder, as its README says."""
    results = folder / "analysis" / "r_results.json"
    results.unlink(missing_ok=True)
    done = subprocess.run(
        ["Rscript", "analysis/analysis.R"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=R_SECONDS,
        check=False,
    )
    written = json.loads(results.read_text(encoding="utf-8")) if results.exists() else None
    return Run(done.returncode, done.stdout + done.stderr, written)


def recomputed(folder: Path) -> dict:
    """report/figures.json: the figures the script must recompute."""
    return json.loads((folder / "report" / "figures.json").read_text(encoding="utf-8"))
