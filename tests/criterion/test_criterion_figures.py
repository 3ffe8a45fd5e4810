"""The criterion section's figures (criterion/figures.py, scoring/web/criterion_plots.py;
docs/design/criterion.md §13.3) and the caption of the correlation heat map: each figure is
well-formed SVG with one point per evaluation, its OLS line where np.polyfit puts it, the
thresholds where the plan puts them, its words in the report's language, and no figure
below three points."""

from xml.etree import ElementTree

import numpy as np
import pytest
import statsmodels.api as sm

from criterion.figures import MIN_POINTS, criterion_figures
from criterion.preregistration.services import save_version
from exports.progress import Progress
from exports.report.build import build_report, render_report_file
from scoring.instruments.shs import DIMENSION_KEYS
from scoring.stats.reliability.analysis import analyze
from scoring.stats.validity.criterion import CriterionRow, criterion_analysis
from scoring.stats.validity.plan import Plan
from scoring.web import criterion_plots
from scoring.web.report import render_analysis_html
from tests.criterion.annotation_data import study_with_transcripts
from tests.criterion.test_dataset import annotate

SVG = "{http://www.w3.org/2000/svg}"
# Thresholds other than the paper's, so that a marker at .20 or .40 would be wrong.
PLAN = Plan(h1_threshold=0.35, falsification_threshold=0.15, alpha=0.10, resamples=60, seed=3)
OTHERS = ("FA", "SR", "LC", "RG")


def seeded_rows(n: int = 30, seed: int = 8) -> list[CriterionRow]:
    """Two evaluations per participant; SHS tracks factual precision; every fifth
    evaluation has no factual precision, every other one citation support."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        precision = float(rng.uniform(0.05, 0.95))
        dimensions = {
            key: float(np.clip(0.9 * precision - 0.45 + rng.normal(0, 0.25), -1, 1))
            for key in DIMENSION_KEYS
        }
        rows.append(
            CriterionRow(
                participant=f"p{i // 2}",
                shs=float(np.mean(list(dimensions.values()))),
                dimensions=dimensions,
                factual_precision=None if i % 5 == 0 else precision,
                citation_support=float(rng.uniform()) if i % 2 else None,
                presentation=float(rng.uniform()),
            )
        )
    return rows


def figures_of(rows, plan=PLAN, language="en"):
    analysis = criterion_analysis(rows, plan).as_dict()
    return analysis, criterion_figures(rows, analysis, language)


def parsed(svg: str) -> ElementTree.Element:
    return ElementTree.fromstring(svg)  # raises on anything but well-formed XML


def circles(root, name):
    return [c for c in root.iter(f"{SVG}circle") if c.get("class") == name]


def lines(root, name):
    return [line for line in root.iter(f"{SVG}line") if line.get("class") == name]


def position(axis, value):
    """Where `value` lies on `axis`: the linear map of axis.low..high onto start..end."""
    share = (value - axis.low) / (axis.high - axis.low)
    return axis.start + share * (axis.end - axis.start)


def assert_line_on_polyfit(root, x, y, x_axis, y_axis):
    slope, intercept = np.polyfit(x, y, 1)
    (fitted,) = lines(root, "fitted")
    for end, value in (("1", min(x)), ("2", max(x))):
        assert float(fitted.get(f"x{end}")) == pytest.approx(position(x_axis, value), abs=0.006)
        expected_y = position(y_axis, intercept + slope * value)
        assert float(fitted.get(f"y{end}")) == pytest.approx(expected_y, abs=0.006)


def text_of(root) -> str:
    return " ".join(text.text or "" for text in root.iter(f"{SVG}text"))


def test_h1_has_a_point_per_evaluation_with_factual_precision_and_the_polyfit_line():
    rows = seeded_rows()
    kept = [row for row in rows if row.factual_precision is not None]
    _analysis, figures = figures_of(rows)

    root = parsed(figures["h1"]["svg"])
    x = np.array([row.factual_precision for row in kept])
    y = np.array([row.shs for row in kept])
    assert len(circles(root, "evaluation")) == len(kept) == figures["h1"]["points"] == 24
    assert_line_on_polyfit(root, x, y, criterion_plots.H1_PRECISION, criterion_plots.H1_SHS)
    first = circles(root, "evaluation")[0]
    assert float(first.get("cx")) == pytest.approx(
        position(criterion_plots.H1_PRECISION, x[0]), abs=0.006
    )
    assert float(first.get("cy")) == pytest.approx(
        position(criterion_plots.H1_SHS, y[0]), abs=0.006
    )


def test_the_strip_marks_the_plans_thresholds_and_the_primary_interval():
    analysis, figures = figures_of(seeded_rows())
    root = parsed(figures["h1"]["svg"])
    strip = criterion_plots.H1_STRIP

    (falsification,) = lines(root, "falsification-threshold")
    (h1,) = lines(root, "h1-threshold")
    assert float(falsification.get("x1")) == pytest.approx(position(strip, 0.15), abs=0.006)
    assert float(h1.get("x1")) == pytest.approx(position(strip, 0.35), abs=0.006)
    # The primary analysis (clustered) with its bootstrap interval, not the Fisher one.
    primary = analysis["h1"]["clustered"]
    assert primary["ci_low"] != analysis["h1"]["unclustered"]["ci_low"]
    (estimate,) = circles(root, "estimate")
    (interval,) = lines(root, "interval")
    assert float(estimate.get("cx")) == pytest.approx(position(strip, primary["r"]), abs=0.006)
    assert float(interval.get("x1")) == pytest.approx(position(strip, primary["ci_low"]), abs=0.006)
    assert float(interval.get("x2")) == pytest.approx(
        position(strip, primary["ci_high"]), abs=0.006
    )
    assert "90 % interval (participant-clustered)" in text_of(root)  # alpha .10
    assert figures["h1"]["confidence"] == pytest.approx(0.90)


def test_a_line_that_would_leave_the_scale_stops_at_its_edge():
    # The OLS line of these three points reaches 4/3 at x = 1: past the top of -1..+1.
    precision, shs = np.array([0.0, 0.5, 1.0]), np.array([-1.0, 1.0, 1.0])
    svg = criterion_plots.h1_svg(
        precision,
        shs,
        criterion_plots.Estimate(None),
        h1_threshold=0.4,
        falsification_threshold=0.2,
        confidence=0.95,
        primary="clustered",
    )
    (fitted,) = lines(parsed(svg), "fitted")
    slope, intercept = np.polyfit(precision, shs, 1)
    top = position(criterion_plots.H1_SHS, 1.0)
    assert float(fitted.get("y2")) == pytest.approx(top, abs=0.006)
    x_at_top = (1.0 - intercept) / slope  # where the line meets +1
    assert float(fitted.get("x2")) == pytest.approx(
        position(criterion_plots.H1_PRECISION, x_at_top), abs=0.006
    )


def test_h2_draws_each_dimensions_correlation_with_sr_highlighted():
    analysis, figures = figures_of(seeded_rows())
    root = parsed(figures["h2"]["svg"])
    correlations = analysis["h2"]["clustered"]["correlations"]

    assert len(circles(root, "dimension")) == 4
    (sr,) = circles(root, "dimension highlighted")
    assert float(sr.get("cx")) == pytest.approx(
        position(criterion_plots.H2_R, correlations["SR"]["r"]), abs=0.006
    )
    whiskers = lines(root, "interval")
    assert len(whiskers) == 5
    sr_whisker = whiskers[DIMENSION_KEYS.index("SR")]
    assert float(sr_whisker.get("x1")) == pytest.approx(
        position(criterion_plots.H2_R, correlations["SR"]["ci_low"]), abs=0.006
    )
    assert figures["h2"]["n_evaluations"] == analysis["h2"]["n"] == 15


def test_h3_plots_the_residual_of_the_other_four_dimensions_against_dp():
    rows = seeded_rows()
    kept = [row for row in rows if row.factual_precision is not None]
    _analysis, figures = figures_of(rows)
    root = parsed(figures["h3"]["svg"])

    # The residual computed here by statsmodels, not by the code under test.
    outcome = np.array([np.mean([row.dimensions[key] for key in OTHERS]) for row in kept])
    precision = np.array([row.factual_precision for row in kept])
    residual = sm.OLS(outcome, sm.add_constant(precision)).fit().resid
    deceptiveness = np.array([row.dimensions["DP"] for row in kept])
    y_axis = criterion_plots.residual_axis(residual)
    assert y_axis.low == -0.5 and y_axis.high == 0.5  # the smallest extent that holds them
    points = circles(root, "evaluation")
    assert len(points) == len(kept)
    for point, value in zip(points, residual, strict=True):
        assert float(point.get("cy")) == pytest.approx(position(y_axis, value), abs=0.006)
    assert_line_on_polyfit(root, deceptiveness, residual, criterion_plots.H3_DECEPTIVENESS, y_axis)
    assert "Residual of the mean of FA, SR, LC and RG on factual precision" in text_of(root)
    assert "Deceptiveness (DP) score" in text_of(root)


def test_h3_with_the_presentation_measure_plots_the_residual_of_shs():
    rows = seeded_rows()
    kept = [row for row in rows if row.factual_precision is not None]
    plan = Plan(resamples=60, seed=3, h3_predictor="presentation")
    _analysis, figures = figures_of(rows, plan)
    root = parsed(figures["h3"]["svg"])

    shs = np.array([row.shs for row in kept])
    precision = np.array([row.factual_precision for row in kept])
    residual = sm.OLS(shs, sm.add_constant(precision)).fit().resid
    presentation = np.array([row.presentation for row in kept])
    y_axis = criterion_plots.residual_axis(residual)
    assert_line_on_polyfit(root, presentation, residual, criterion_plots.H3_PRESENTATION, y_axis)
    assert "Residual of overall SHS on factual precision" in text_of(root)


def test_the_figures_speak_german_in_a_german_report_with_svg_coordinates():
    _analysis, figures = figures_of(seeded_rows(), language="de")

    for key in ("h1", "h2", "h3"):
        root = parsed(figures[key]["svg"])
        assert root.find(f"{SVG}title").text == root.get("aria-label")
        for element in root.iter():
            for name in ("x", "y", "cx", "cy", "x1", "x2", "y1", "y2"):
                assert "," not in (element.get(name) or "")
    h1 = text_of(parsed(figures["h1"]["svg"]))
    assert "Faktische Präzision" in h1 and "SHS-Gesamtwert (wahrgenommene Zuverlässigkeit)" in h1
    assert "Falsifikationsschwelle +0,15" in h1 and "H1-Schwelle +0,35" in h1
    assert "Quellenzuverlässigkeit" in text_of(parsed(figures["h2"]["svg"]))
    assert "Täuschungspotenzial (DP)" in text_of(parsed(figures["h3"]["svg"]))
    assert "reliable" not in " ".join(figures[key]["svg"] for key in ("h1", "h2", "h3"))


def test_no_figure_below_three_points():
    rows = seeded_rows(n=5)  # the first has no factual precision: four remain
    assert criterion_figures(rows, criterion_analysis(rows, PLAN).as_dict(), "en")["h1"]["svg"]
    few = [*rows[:3]]  # two with factual precision
    _analysis, figures = figures_of(few)

    assert figures["h1"]["points"] == figures["h3"]["points"] == MIN_POINTS - 1
    assert figures["h1"]["svg"] is None and figures["h3"]["svg"] is None
    # Two evaluations with citation support: no correlation, no dimension to draw.
    assert figures["h2"]["points"] == 0 and figures["h2"]["svg"] is None


@pytest.fixture
def annotated(personas, study_a):
    # Transcript codes are random, so which transcript gets which value is too:
    # enough sessions that every dimension varies among the half with citation
    # support, whatever the draw (with six, one sometimes did not, and H2 had
    # too few correlations to draw).
    study_with_transcripts(study_a, sessions=12)
    annotate(study_a, personas["coordinator_a"])
    save_version(study_a, {"bootstrap_resamples": 200}, personas["coordinator_a"])
    return study_a


def test_the_german_report_shows_the_three_figures_with_captions(annotated):
    report = build_report(annotated, Progress(lambda _done: None), "de")
    html = render_report_file(report, "de")

    assert html.count('<figure class="plot criterion-figure">') == 3
    assert html.count('<svg xmlns="http://www.w3.org/2000/svg" class="shs-chart criterion-') == 3
    assert (
        "Jeder Punkt ist eine Bewertung: ihr SHS-Gesamtwert (wahrgenommene Zuverlässigkeit" in html
    )
    assert "Hervorgehoben ist die Quellenzuverlässigkeit (SR)" in html
    assert "das Residuum des Mittels der vier übrigen Dimensionen" in html
    n = report["criterion"]["figures"]["h1"]["points"]
    assert n == report["criterion"]["analysis"]["h1"]["n"]
    assert f"N = {n}, mit der OLS-Geraden" in html
    # The figures follow their hypotheses' tables, in the order of the section.
    positions = [
        html.index(mark)
        for mark in (
            'id="criterion-h1"',
            'class="shs-chart criterion-h1"',
            'id="criterion-h2"',
            'class="shs-chart criterion-h2"',
            'id="criterion-h3"',
            'class="shs-chart criterion-h3"',
        )
    ]
    assert positions == sorted(positions)


def test_without_factual_precision_the_section_says_why_there_is_no_figure(personas, study_a):
    study_with_transcripts(study_a, sessions=3)
    save_version(study_a, {}, personas["coordinator_a"])  # begun, nothing annotated

    report = build_report(study_a, Progress(lambda _done: None))
    html = render_report_file(report)

    assert "criterion-figure" not in html
    assert (
        "No figure: it needs at least 3 evaluations with SHS and factual precision, there are 0."
        in html
    )
    # A report stored before the figures existed renders without them.
    del report["criterion"]["figures"]
    assert "No figure" not in render_report_file(report)


@pytest.fixture(scope="module")
def answers_and_result():
    rng = np.random.default_rng(21)
    perceived = rng.normal(0.2, 1, size=(60, 1))
    answers = np.clip(np.rint(perceived * np.array([1, -1] * 5) + rng.normal(size=(60, 10))), -2, 2)
    return answers.astype(int), analyze(answers.astype(int))


def test_the_heat_map_has_a_caption_in_the_reports_language(answers_and_result):
    answers, result = answers_and_result
    page = render_analysis_html(result, answers, language="de")

    caption = (
        "<figcaption>Pearson-Korrelationen zwischen den fünf Dimensionswerten "
        "(FA, SR, LC, DP, RG) über 60 Bewertungen: Rot für eine positive"
    )
    assert caption in page


def test_a_report_without_a_heat_map_shows_no_empty_figure(answers_and_result):
    answers, result = answers_and_result
    page = render_analysis_html(
        result, answers, figures={"profile": None, "heatmap": None, "items": None}
    )

    assert "Heat map of the Pearson" not in page and "five dimension scores (FA, SR" not in page
