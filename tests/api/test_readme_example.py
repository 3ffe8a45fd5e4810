"""The README's examples of the API (docs/design/api.md §16), in Python and
in R, run as a reader would run them: in a process of their own, over HTTP
to a live server, the export written by a real Celery worker, and what they
print checked against the study's data.

Like the R oracle (tests/r_oracle.py), the R example does not skip when R is
missing: CI installs R and httr, and an example nobody ran must not pass.
"""

import csv
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from exports.models import ExportJob
from tests.exports.expected import expected_evaluations
from tests.exports.factories import populate_study
from tests.worker import export_worker_for

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SESSIONS = 5  # two evaluations each


def readme_example(language: str) -> str:
    """The fenced block right after <!-- api-example-LANGUAGE --> in the README."""
    marker = f"<!-- api-example-{language} -->"
    text = README.read_text(encoding="utf-8")
    assert text.count(marker) == 1, f"README.md must mark its {language} example once: {marker}"
    block = re.match(
        rf"\A\s*```{language}\n(.*?)^```", text.split(marker, 1)[1], re.DOTALL | re.MULTILINE
    )
    assert block, f"a ```{language} block must follow {marker} in README.md"
    return block.group(1)


@pytest.fixture
def export_worker(tasks_run_in_process, live_server, tmp_path, settings):
    with export_worker_for(settings, tmp_path) as worker:
        yield worker


@pytest.fixture
def run_example(export_worker, live_server, study_a, token_for, tmp_path):
    """run_example(command, language) -> the finished process, run in tmp_path
    with the three variables the README names and a bare PATH, HOME and locale:
    nothing of this test's own settings reaches it."""
    populate_study(study_a, sessions=SESSIONS, extras=False)
    _token, secret = token_for("coordinator_a", [study_a])

    def run(command: str, language: str) -> subprocess.CompletedProcess:
        script = tmp_path / f"example.{language}"
        script.write_text(readme_example(language), encoding="utf-8")
        finished = subprocess.run(
            [command, str(script)],
            cwd=tmp_path,
            env={
                "PATH": "/usr/bin:/bin",
                "HOME": str(tmp_path),
                "LANG": "C.UTF-8",
                "SHS_URL": live_server.url + "/",
                "SHS_TOKEN": secret,
                "SHS_STUDY": study_a.slug,
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert finished.returncode == 0, finished.stderr[-3000:] + export_worker.log_text()[-3000:]
        return finished

    return run


def scores_by_system(study) -> dict[str, list[float]]:
    """Each system's SHS scores, worked out from the database."""
    scores = defaultdict(list)
    for row in expected_evaluations(study).values():
        scores[row["system"]].append(row["shs"])
    return dict(sorted(scores.items()))


def aggregated(line: str) -> tuple[str, float]:
    """A row of what R's aggregate() prints: "1 <system> <mean>" under "  system shs"."""
    row = re.fullmatch(r"\s*\d+\s+(.+?)\s+(\S+)", line)
    assert row, f"not a row of aggregate(): {line!r}"
    return row.group(1), float(row.group(2))


def assert_a_worker_ran_the_export(study, worker) -> None:
    job = ExportJob.objects.get(study=study)
    assert (job.format, job.status) == ("csv", ExportJob.Status.SUCCEEDED)
    assert job.requested_by.email == "coord-a@example.org"
    assert re.search(r"exports\.tasks\.run_export_job\[[^]]+\] succeeded", worker.log_text())


def test_the_python_example_exports_and_reads_the_csv(run_example, export_worker, study_a):
    # Given a study with submitted evaluations and a coordinator's token (run_example)
    # When the README's Python example runs
    finished = run_example(sys.executable, "python")

    # Then it read every evaluation, as the worker exported them
    expected = [f"{SESSIONS * 2} evaluations"] + [
        f"{system}: mean SHS {sum(values) / len(values):.3f} (n = {len(values)})"
        for system, values in scores_by_system(study_a).items()
    ]
    assert finished.stdout.splitlines() == expected
    assert_a_worker_ran_the_export(study_a, export_worker)


def test_the_r_example_exports_and_reads_the_csv(run_example, export_worker, study_a, tmp_path):
    rscript = shutil.which("Rscript")
    assert rscript, "Rscript is not on PATH: the README's R example needs R and httr"
    # When the README's R example runs
    finished = run_example(rscript, "r")

    # Then the file it saved holds every evaluation, and it printed their means
    with open(tmp_path / "evaluations.csv", encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == SESSIONS * 2
    lines = finished.stdout.splitlines()
    assert lines[0] == f"{SESSIONS * 2} evaluations"
    assert {system: mean for system, mean in map(aggregated, lines[2:])} == {
        system: pytest.approx(sum(values) / len(values), abs=1e-6)
        for system, values in scores_by_system(study_a).items()
    }
    assert_a_worker_ran_the_export(study_a, export_worker)
