"""The criterion sections of the replication package under the settings the
default study does not use (docs/design/exports.md §7.7): a pre-registration
with two-sided tests, the unclustered analysis primary and the annotated
presentation measure as H3's predictor, three annotators, and a measure only
some transcripts have twice. R recomputes every closed-form figure of the
criterion section exactly and reaches every verdict that rests on no random
draws as the report does; the bootstrap figures are left to the end-to-end
test, whose rule allows for R's own draws. A verdict drawn from resamples may
differ from the report's only where both lie within the draws' Monte Carlo
error of its threshold."""

import io
import json
import math
import random
import re
from datetime import timedelta
from statistics import NormalDist

import time_machine
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from criterion.annotations.services import annotations_import
from surveys.models import Transcript
from tests.criterion.annotation_data import csv_bytes
from tests.replication.package import export_package, recomputed, run_r

NAMES = ("Zoë Realname", "Adam Example")


def _preregister(client, study):
    url = reverse("criterion:preregistration_edit", args=[study.slug])
    form = client.get(url).context["form"]
    data = {name: form[name].value() for name in form.fields}
    data.update(
        bootstrap_seed="11",
        bootstrap_resamples="300",
        text="H3 on the presentation measure.",
        h3_predictor="presentation",
        sidedness="two_sided",
        primary_analysis="unclustered",
    )
    response = client.post(url, {k: "" if v is None else v for k, v in data.items()})
    assert response.status_code == 302


def _presentation(study, user):
    """Two annotators with real names rate how confidently errors are framed,
    most transcripts twice, some once."""
    rng = random.Random(4)
    codes = sorted(
        Transcript.objects.filter(interaction__session__study=study).values_list("code", flat=True)
    )
    rows = [
        (code, name, "presentation", round(rng.random(), 3))
        for code in codes
        for name in NAMES
        if rng.random() < 0.9
    ]
    annotations_import(study=study, data=csv_bytes(rows), file_name="p.csv", user=user)


def test_r_recomputes_the_criterion_section_under_other_settings(
    study_a, personas, client_for, tmp_path
):
    # given a study pre-registered with other settings, three annotators of the
    # simulated measures and two of the presentation measure
    with time_machine.travel(timezone.now() - timedelta(days=365), tick=False):
        _preregister(client_for("coordinator_a"), study_a)
    call_command(
        "simulate_study", study_a.slug, "--participants", "30", "--seed", "9",
        "--annotators", "3", "--store-annotations", stdout=io.StringIO(),
    )  # fmt: skip
    _presentation(study_a, personas["coordinator_a"])

    # when its replication package is exported and its script run
    folder = export_package(study_a, tmp_path / "package")
    run = run_r(folder)

    # then every closed-form figure of the criterion section equals the report's
    assert run.results is not None, run.output[-4000:]
    figures = recomputed(folder)["figures"]
    mine = {path for path in figures if path.startswith("criterion.")}
    assert "criterion.analysis.h3.clustered.se" in mine
    assert "criterion.agreement.presentation.icc_2_1.ci_low" in mine
    rows = {row["figure"]: row for row in run.results["comparison"] if row["figure"] in mine}
    assert set(rows) == mine
    closed = [row for row in rows.values() if row["rule"] == "closed_form"]
    assert len(closed) > 150
    assert [row["figure"] for row in closed if row["status"] != "equal"] == []
    # and every verdict that rests on no random draws is the report's, and
    # none drawn from resamples differs by more than the draws explain
    verdicts = run.results["verdicts"]
    assert [row["verdict"] for row in verdicts if row["status"] == "DIFFERS"] == []
    fixed = [row for row in verdicts if not row["drawn"]]
    assert {row["verdict"] for row in fixed} >= {
        "criterion.analysis.h1.verdict",
        "criterion.analysis.h2.verdict",
        "criterion.analysis.h3.verdict",
        "criterion.analysis.falsification.verdict",
    }
    assert [row for row in fixed if row["status"] != "equal"] == []
    # and the annotators' names are nowhere in the package's data
    for path in (folder / "data").glob("*.csv"):
        text = path.read_text(encoding="utf-8-sig")
        assert not any(name in text for name in NAMES), path.name


def _edit_report(folder, edit) -> None:
    path = folder / "report" / "report.json"
    report = json.loads(path.read_text(encoding="utf-8"))
    edit(report["criterion"]["analysis"])
    path.write_text(json.dumps(report, ensure_ascii=False), encoding="utf-8")


def _other_word(word: str) -> tuple[str, float]:
    """A verdict the draws could not have turned `word` into, with a z far
    from the critical one."""
    return ("inconclusive", 0.0) if word != "inconclusive" else ("supported", 10.0)


def test_a_drawn_verdict_differs_by_chance_only_near_its_threshold(
    study_a, personas, client_for, tmp_path
):
    # given the package of a study pre-registered with other settings, its
    # script run once
    with time_machine.travel(timezone.now() - timedelta(days=365), tick=False):
        _preregister(client_for("coordinator_a"), study_a)
    call_command(
        "simulate_study", study_a.slug, "--participants", "30", "--seed", "9",
        "--annotators", "2", "--store-annotations", stdout=io.StringIO(),
    )  # fmt: skip
    folder = export_package(study_a, tmp_path / "package")
    first = run_r(folder)
    assert first.results is not None, first.output[-4000:]
    words = {row["verdict"]: row["R"] for row in first.results["verdicts"]}

    # when H1's threshold is moved so that R's clustered z lies just above the
    # critical z (R draws the same bootstrap again), while the report's lies
    # just below it; and the report's word of an H2 comparison is one its z,
    # far from the critical z, could not have given
    report = json.loads((folder / "report" / "report.json").read_text(encoding="utf-8"))
    alpha = report["criterion"]["plan"]["alpha"]
    critical = NormalDist().inv_cdf(1 - alpha / 2)  # two-sided
    r = report["criterion"]["analysis"]["h1"]["unclustered"]["r"]
    se = first.results["figures"]["criterion.analysis.h1.clustered.test.se"]
    threshold = math.tanh(math.atanh(r) - (critical + 0.01) * se)
    script = folder / "analysis" / "analysis.R"
    text = script.read_text(encoding="utf-8")
    script.write_text(
        re.sub(r"(?m)^h1_threshold <- .*$", f"h1_threshold <- {threshold!r}", text),
        encoding="utf-8",
    )
    comparison = "criterion.analysis.h2.clustered.comparisons.FA.verdict"
    word, z = _other_word(words[comparison])

    def edit(analysis):
        analysis["h1"]["clustered"].update(verdict="inconclusive")
        analysis["h1"]["clustered"]["test"]["z"] = critical - 0.01
        analysis["h2"]["clustered"]["comparisons"]["FA"].update(verdict=word, z=z)

    _edit_report(folder, edit)
    second = run_r(folder)

    # then R's "supported" beside the report's "inconclusive", both z's within
    # the bootstrap's Monte Carlo error of the critical z, is left to chance
    assert second.results is not None, second.output[-4000:]
    status = {row["verdict"]: row for row in second.results["verdicts"]}
    h1 = status["criterion.analysis.h1.clustered.verdict"]
    assert (h1["report"], h1["R"], h1["status"]) == (
        "inconclusive",
        "supported",
        "differs (Monte Carlo)",
    )
    # and a drawn verdict whose z lies far from it differs, and fails the run
    assert status[comparison]["status"] == "DIFFERS"
    assert second.returncode != 0
    assert second.results["equal"] is False
