"""The criterion-validity study from pre-registration to verdict
(docs/design/criterion.md §13): a simulated study of 200 interactions, two
annotators' measures imported through the page, the study report and
`shs_criterion` showing the same figures. The figures are recomputed here from
the stored scores and the imported file, independently of criterion/ and
scoring/stats/validity/criterion.py."""

import csv
import io
import json
from collections import defaultdict
from datetime import timedelta

import numpy as np
import pytest
import time_machine
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from scipy import stats

from criterion.models import Annotation, PreRegistration
from exports.models import ExportJob
from exports.runner import export_job_run
from exports.services import export_job_create
from scoring.templatetags.shs_numbers import fixed, signed
from surveys.models import Evaluation, Transcript

pytestmark = pytest.mark.django_db(transaction=True)

PARTICIPANTS = 100  # two blocks each: the paper's N >= 200 interactions


def _preregister(client, study, resamples="500"):
    """The coordinator saves the form as shown (the paper's values), with a seed and text."""
    url = reverse("criterion:preregistration_edit", args=[study.slug])
    form = client.get(url).context["form"]
    data = {name: form[name].value() for name in form.fields}
    data.update(
        bootstrap_seed="8002",
        bootstrap_resamples=resamples,
        text="H1-H3 and the falsification criterion of paper section 8.2.",
    )
    response = client.post(url, {k: "" if v is None else v for k, v in data.items()})
    assert response.status_code == 302, response.content.decode()[-3000:]


def _upload(client, study, data: bytes, name: str):
    url = reverse("criterion:annotations", args=[study.slug])
    return client.post(url, {"file": SimpleUploadedFile(name, data)})


def _report_html(study, coordinator) -> tuple[str, dict]:
    job = export_job_create(study=study, requested_by=coordinator, fmt="report-html")
    export_job_run(job_id=job.pk)
    job = ExportJob.objects.get(pk=job.pk)
    assert job.status == ExportJob.Status.SUCCEEDED
    return job.absolute_path.read_text(encoding="utf-8"), job.report_data


def _independent_h1(study, rows: list[dict]) -> tuple[float, int]:
    """Pearson r of the stored SHS with the file's mean factual precision per transcript."""
    precision = defaultdict(list)
    for row in rows:
        if row["measure"] == "factual_precision":
            precision[row["transcript_id"]].append(float(row["value"]))
    blocks = {
        (session, block): code
        for code, session, block in Transcript.objects.filter(
            interaction__session__study=study
        ).values_list("code", "interaction__session_id", "interaction__block")
    }
    pairs = [
        (shs, np.mean(precision[blocks[(session, block)]]))
        for shs, session, block in Evaluation.objects.filter(
            session__study=study, session__is_pilot=False, submitted_at__isnull=False
        ).values_list("shs", "session_id", "block")
        if blocks.get((session, block)) in precision
    ]
    shs, fp = np.array(pairs).T
    return stats.pearsonr(shs, fp).statistic, len(pairs)


def test_a_simulated_criterion_study_from_preregistration_to_verdict(
    study_a, personas, client_for, tmp_path
):
    coordinator = client_for("coordinator_a")
    # The simulated sessions run on a clock in the past (surveys/simulation.py): the
    # pre-registration is made before the first of them, as a real one would be.
    with time_machine.travel(timezone.now() - timedelta(days=365), tick=False):
        _preregister(coordinator, study_a)
    path = tmp_path / "annotations.csv"
    call_command(
        "simulate_study", study_a.slug, "--participants", str(PARTICIPANTS), "--seed", "8",
        "--annotators", "2", "--annotations-file", str(path), "--automated-results",
        stdout=io.StringIO(),
    )  # fmt: skip
    registration = PreRegistration.objects.get(study=study_a)
    assert registration.frozen_at is not None  # frozen by the first non-pilot session

    text = path.read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert {row["annotator"] for row in rows} == {"annotator-1", "annotator-2"}

    # One bad row: the whole file is refused, naming the row; nothing is stored.
    lines = text.splitlines()
    bad_number = 57  # the file's line 57, as a spreadsheet numbers it (header = row 1)
    fields = lines[bad_number - 1].split(",")
    lines[bad_number - 1] = ",".join([*fields[:3], "1.7"])
    refused = _upload(coordinator, study_a, "\n".join(lines).encode(), "bad.csv")
    assert f"row {bad_number}:" in refused.content.decode()
    assert not Annotation.objects.exists()

    accepted = _upload(coordinator, study_a, text.encode(), "annotations.csv")
    assert accepted.status_code == 302
    assert Annotation.objects.count() == len(rows)

    html, stored = _report_html(study_a, personas["coordinator_a"])
    out = tmp_path / "criterion.json"
    call_command(
        "shs_criterion", study_a.slug, "-o", str(out), "--html", str(tmp_path / "c.html"),
        stdout=io.StringIO(),
    )  # fmt: skip
    report = json.loads(out.read_text(encoding="utf-8"))

    # The command writes the figures the study report shows.
    assert report["analysis"] == stored["criterion"]["analysis"]
    analysis = report["analysis"]
    assert analysis["counts"]["n_evaluations"] == 2 * PARTICIPANTS
    assert analysis["counts"]["n_participants"] == PARTICIPANTS

    # H1 against an independent computation from the stored scores and the file.
    r, n = _independent_h1(study_a, rows)
    assert n == 2 * PARTICIPANTS
    h1 = analysis["h1"]
    assert h1["unclustered"]["r"] == pytest.approx(r, abs=1e-9)
    assert h1["clustered"]["r"] == pytest.approx(r, abs=1e-9)
    assert h1["primary"] == "clustered"

    # The frozen pre-registration, with its fingerprint.
    frozen = report["preregistration"]["frozen"]
    assert frozen["sha256"] == registration.sha256 and frozen["sha256"] in html
    assert report["preregistration"]["deviations"] == []
    assert report["measures"] == [
        "citation_support",
        "detector:semantic_entropy",
        "factual_precision",
    ]
    # Agreement of the two annotators on both measures.
    for measure in ("factual_precision", "citation_support"):
        icc = report["agreement"][measure]["icc_2_1"]
        assert icc["n_raters"] == 2
        assert fixed(icc["value"]) in html
    # H1-H3 unclustered and clustered, and the verdict.
    for part in ("h1", "h3"):
        for kind in ("unclustered", "clustered"):
            assert analysis[part][kind]["ci_low"] is not None
    assert signed(h1["unclustered"]["ci_low"]) in html
    assert signed(h1["clustered"]["ci_low"]) in html
    assert signed(analysis["h3"]["clustered"]["beta_std"]) in html
    falsification = analysis["falsification"]
    low, high = h1["clustered"]["ci_low"], h1["clustered"]["ci_high"]
    expected = "falsified" if high < 0.2 else "not_falsified" if low >= 0.2 else "inconclusive"
    assert falsification["verdict"] == expected
    headline = {
        "falsified": "Verdict: falsified.",
        "not_falsified": "Verdict: not falsified.",
        "inconclusive": "Verdict: inconclusive. Nothing was decided.",
    }[expected]
    assert headline in html
    assert falsification["threshold_source"] == "preregistered"
    assert "was pre-registered before data collection began" in html
    # The joint-use table: every system with its automated score and SHS profile.
    systems = report["joint_use"]["systems"]
    assert {s["name"] for s in systems} == set(study_a.systems.values_list("name", flat=True))
    for system in systems:
        assert system["name"] in html
        for result in system["automated"]:
            assert result["benchmark"] in html
    # The divergence note, worded as the paper's proposition, where a system is flagged.
    flagged = [s for s in systems if s["divergence"]["flag"]]
    assert ("Proposition, not result" in html) == bool(flagged)
