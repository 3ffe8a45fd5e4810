"""The replication package, proven against R (docs/design/exports.md §7.7): for
a plain study, a three-language validation study with companion scales and a
retest, and a criterion study with two annotators, `Rscript
analysis/analysis.R` recomputes every figure the package names from its data
with lavaan, psych and base R, and finds each equal to the report's within
its rule; an edited value is named in the comparison, and a file edited into
an impossible shape stops the script, naming the row."""

import csv
import hashlib
import io
from datetime import timedelta

import time_machine
from django.core.management import call_command
from django.utils import timezone

from exports.replication.package import CHECKED_WITH, MANIFEST
from tests.criterion.test_acceptance import _preregister
from tests.replication.package import export_package, recomputed, run_r

# Each part of the script must have figures to recompute in these studies.
SECTIONS = {
    "plain": {"scores", "reliability", "correlations"},
    "validation": {"cfa", "invariance", "retest", "nested", "convergent"},
    "criterion": {"criterion"},
}


def _assert_replicates(folder, kind):
    run = run_r(folder)
    assert run.returncode == 0, run.output[-6000:]
    figures = recomputed(folder)["figures"]
    assert f"Every figure equals the report's ({len(figures)} figures)." in run.output
    assert run.results["equal"] is True
    statuses = {row["status"] for row in run.results["comparison"]}
    assert statuses == {"equal"}
    sections = {figure["section"] for figure in figures.values()}
    assert SECTIONS[kind] <= sections, sections
    # The README names the versions this run used: R and each package it loaded.
    assert CHECKED_WITH["R"] in run.results["r_version"]
    assert set(run.results["packages"]) <= set(CHECKED_WITH)
    for name, version in run.results["packages"].items():
        assert CHECKED_WITH[name] == version, name
    return run


def _manifest_holds(folder):
    lines = (folder / MANIFEST).read_text(encoding="utf-8").splitlines()
    listed = {}
    for line in lines:
        digest, name = line.split("  ", 1)
        listed[name] = digest
    on_disk = {
        str(path.relative_to(folder)) for path in folder.rglob("*")
        if path.is_file() and path.name != MANIFEST and path.parent.name != "analysis"
        or path.name == "analysis.R"
    }  # fmt: skip
    assert on_disk <= set(listed)
    for name, digest in listed.items():
        assert hashlib.sha256((folder / name).read_bytes()).hexdigest() == digest, name


def _edit_cell(path, row, column, value):
    text = path.read_text(encoding="utf-8-sig")
    rows = list(csv.reader(io.StringIO(text)))
    rows[row][rows[0].index(column)] = value
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    path.write_text(out.getvalue(), encoding="utf-8-sig")


def test_a_plain_study_replicates_and_an_edit_is_named(study_a, personas, tmp_path):
    call_command(
        "simulate_study", study_a.slug, "--participants", "40", "--seed", "3",
        stdout=io.StringIO(),
    )  # fmt: skip
    folder = export_package(study_a, tmp_path / "plain")
    _manifest_holds(folder)
    _assert_replicates(folder, "plain")

    # One answer changed: the comparison names the figures that then differ.
    evaluations = folder / "data" / "evaluations.csv"
    original = evaluations.read_bytes()
    first = next(csv.DictReader(io.StringIO(original.decode("utf-8-sig"))))
    _edit_cell(evaluations, 1, "q1", "2" if first["q1"] != "2" else "-2")
    edited = run_r(folder)
    assert edited.returncode == 1, edited.output[-3000:]
    differing = {
        row["figure"] for row in edited.results["comparison"] if row["status"] == "DIFFERS"
    }
    assert "analysis.cronbach_alpha.alpha" in differing
    assert "analysis.item_total.q1" in differing
    assert "of" in edited.output and "figures differ from the report's" in edited.output
    assert "analysis.cronbach_alpha.alpha" in edited.output.split("figures differ")[1]
    assert edited.results["equal"] is False

    # An answer no SHS form can give: the script stops, naming the file and row.
    evaluations.write_bytes(original)
    _edit_cell(evaluations, 3, "q7", "7")
    refused = run_r(folder)
    assert refused.returncode != 0
    assert 'data/evaluations.csv, row 4: q7 is "7"' in refused.output
    assert refused.results is None

    # A session of another export, with the pilots: not the report's sample.
    evaluations.write_bytes(original)
    _edit_cell(folder / "data" / "sessions.csv", 2, "pilot", "1")
    piloted = run_r(folder)
    assert piloted.returncode != 0
    assert "data/sessions.csv, row 3: a pilot session" in piloted.output


def test_a_validation_study_in_three_languages_replicates(study_a, personas, tmp_path):
    call_command(
        "simulate_study", study_a.slug, "--participants", "160", "--seed", "16",
        "--languages", "en,de,fr", "--companions", "sus,scs,trust", "--retest",
        stdout=io.StringIO(),
    )  # fmt: skip
    folder = export_package(study_a, tmp_path / "validation")
    _assert_replicates(folder, "validation")


def test_a_criterion_study_with_two_annotators_replicates(study_a, personas, client_for, tmp_path):
    with time_machine.travel(timezone.now() - timedelta(days=365), tick=False):
        # The platform's default number of resamples: Monte Carlo error small
        # enough for R's own draws to agree within the bootstrap rule.
        _preregister(client_for("coordinator_a"), study_a, resamples="2000")
    call_command(
        "simulate_study", study_a.slug, "--participants", "40", "--seed", "8",
        "--annotators", "2", "--store-annotations", "--automated-results",
        stdout=io.StringIO(),
    )  # fmt: skip
    folder = export_package(study_a, tmp_path / "criterion")
    # The frozen pre-registration, byte for byte as its hash was taken.
    version = folder / "preregistration" / "v1.json"
    digest = (folder / "preregistration" / "v1.sha256").read_text().split()[0]
    assert hashlib.sha256(version.read_bytes()).hexdigest() == digest
    _assert_replicates(folder, "criterion")
