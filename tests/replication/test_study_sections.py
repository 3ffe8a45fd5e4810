"""The replication script's sections on the SHS itself and on the study's
conduct (exports.replication.study): they name every figure the report shows of
the SHS analysis, its sample and its systems, none of the report's copies of
them, the conduct's figures the data hold and none they do not, and they are
left out when the report has no such figures. No R here
(tests/replication/test_r_replicates_the_report, test_conduct_in_r)."""

import numpy as np

from exports.progress import Progress
from exports.replication.figures import leaves, recomputed_figures
from exports.replication.sections import r_sections
from exports.replication.study import SECTIONS
from exports.report.build import build_report
from scoring.instruments.shs import DIMENSION_KEYS, ITEM_KEYS
from scoring.stats.reliability.analysis import DIMENSION_PAIRS, analyze
from tests.exports.factories import populate_study

# The analysis' numbers that are settings or caveats' parameters, not figures.
NOT_FIGURES = ("analysis.small_sample.threshold", "analysis.warnings.")
# The sections on the study's conduct, after those on the SHS.
CONDUCT = ["completion", "feedback", "prompts", "quality", "exclusions"]
SHS_KEYS = {section.key for section in SECTIONS} - set(CONDUCT)
# The conduct's numbers that are settings, passed to R as such.
CONDUCT_SETTINGS = {"feedback.questions.*.options.*.code", "quality.speeding_seconds"}
# The conduct's numbers the package's data cannot give (exports.replication.study).
NOT_IN_DATA = {
    "exclusions.pilot",
    "exclusions.withdrawn",
    "exclusions.ineligible",
    "exclusions.unsubmitted_evaluations",
}


def keys_applying(report):
    return [section.key for section in SECTIONS if section.applies(report)]


def expected_paths(report):
    systems = [
        f"systems.{i}.{name}"
        for i in range(len(report["systems"]))
        for name in ("evaluations", "shs_mean", "shs_sd")
    ]
    analysis = [
        "analysis.n",
        "analysis.overall.mean",
        "analysis.overall.sd",
        "analysis.cronbach_alpha.alpha",
        "analysis.cronbach_alpha.ci95.0",
        "analysis.cronbach_alpha.ci95.1",
        "analysis.additions.omega_total",
        "analysis.response_chi2.chi2",
        "analysis.response_chi2.df",
        "analysis.response_chi2.p",
        "analysis.shapiro.W",
        "analysis.shapiro.p",
        "analysis.skewness",
        "analysis.kurtosis",
        *(f"analysis.response_chi2.counts.{answer}" for answer in range(-2, 3)),
        *(f"analysis.dimension_correlations.{a}-{b}.{f}" for a, b in DIMENSION_PAIRS for f in "rp"),
    ]
    for key in DIMENSION_KEYS:
        profile = f"analysis.dimension_profile.{key}"
        analysis += [f"{profile}.mean", f"{profile}.sd"]
        for part in ("consistent_share", "paired_item_r", "paired_item_p"):
            analysis.append(f"analysis.{part}.{key}")
        analysis.append(f"analysis.additions.spearman_brown.{key}")
    for key in ITEM_KEYS:
        for part in ("item_total", "alpha_if_deleted", "item_agreement"):
            analysis.append(f"analysis.{part}.{key}")
    languages = [f"languages.{code}" for code in report["languages"]]
    return {"n", "participants", "administrators", *languages, *systems, *analysis}


def conduct_paths(report):
    questions = report["feedback"]["questions"]
    feedback = [
        f"feedback.questions.{q}.options.{o}.{count}"
        for q, question in enumerate(questions)
        for o in range(len(question["options"]))
        for count in ("sessions", "administrators", "share")
    ]
    feedback += [f"feedback.questions.{q}.most_frequent_share" for q in range(len(questions))]
    feedback += [
        f"feedback.by_administrator.{a}.answers.{q}"
        for a, row in enumerate(report["feedback"]["by_administrator"])
        for q in range(len(row["answers"]))
    ]
    quality = [
        f"quality.{part}.{i}.{name}"
        for part, names in (("flags", ("flagged", "judged")), ("figures", ("all", "kept")))
        for i in range(len(report["quality"][part]))
        for name in names
    ]
    prompts = [f"prompts.{key}" for key in report["prompts"]]
    return {
        "completion.n",
        "completion.mean_minutes",
        "completion.sd_minutes",
        "feedback.sessions",
        "feedback.administrators",
        *feedback,
        *prompts,
        "quality.n",
        "quality.kept",
        "quality.left_out",
        *quality,
        "exclusions.complete",
        "exclusions.abandoned",
        "exclusions.in_progress",
    }


def _general(path):
    """The path with its list indices as "*", as NOT_IN_DATA names them."""
    return ".".join("*" if part.isdigit() else part for part in path.split("."))


def test_the_sections_are_registered_with_scores_first():
    keys = [section.key for section in r_sections()]
    assert keys[: len(SECTIONS)] == [section.key for section in SECTIONS]
    assert keys[0] == "scores"


def test_the_sections_name_every_shown_figure_of_the_analysis_and_no_copy(personas, study_a):
    populate_study(study_a, sessions=4)
    report = build_report(study_a, Progress(lambda _done: None))
    report.pop("figures")

    assert keys_applying(report) == [section.key for section in SECTIONS]
    figures = recomputed_figures(report, SECTIONS)["figures"]
    assert set(figures) == expected_paths(report) | conduct_paths(report)
    assert len(conduct_paths(report)) > 60
    # Every number of the analysis is named, but its settings and caveats.
    numbers = {path for path, _value in leaves(report["analysis"], "analysis")}
    assert {path for path in numbers if not path.startswith(NOT_FIGURES)} <= set(figures)
    # The report's copies of the analysis are not compared twice.
    assert not any(path.startswith(("items.", "dimensions.", "table6.")) for path in figures)
    assert figures["analysis.additions.omega_total"]["rule"] == "iterative"
    assert figures["analysis.cronbach_alpha.ci95.1"]["rule"] == "closed_form"
    names = SECTIONS[0].parameters(report)["systems"][0]
    assert names == [system["name"] for system in report["systems"]]


def test_the_conduct_sections_name_what_the_data_hold_and_its_settings(personas, study_a):
    populate_study(study_a, sessions=4)
    report = build_report(study_a, Progress(lambda _done: None))
    report.pop("figures")
    figures = recomputed_figures(report, SECTIONS)["figures"]

    # Every number of the conduct's parts is compared, but its settings and
    # what the data lack.
    numbers = {path for part in CONDUCT for path, _value in leaves(report[part], part)}
    left_out = NOT_IN_DATA | CONDUCT_SETTINGS
    assert {path for path in numbers if _general(path) not in left_out} == conduct_paths(report)
    assert not {path for path in figures if _general(path) in NOT_IN_DATA}
    rules = {path: figure["rule"] for path, figure in figures.items() if path in numbers}
    timed = {"completion.mean_minutes", "completion.sd_minutes"}
    assert {rules.pop(path) for path in timed} == {"rounded_seconds"}
    assert set(rules.values()) == {"closed_form"}

    # The settings the R code follows, in the report's order.
    by_key = {section.key: section for section in SECTIONS}
    options = by_key["feedback"].parameters(report)["feedback_options"][0]
    questions = report["feedback"]["questions"]
    assert list(options) == [question["key"] for question in questions]
    assert options[questions[0]["key"]] == [option["code"] for option in questions[0]["options"]]
    settings = {
        name: value for name, (value, _note) in by_key["quality"].parameters(report).items()
    }
    assert settings["speeding_seconds"] == study_a.speeding_seconds
    assert settings["quality_flags"] == [flag["key"] for flag in report["quality"]["flags"]]
    assert settings["quality_figures"] == [row["figure"] for row in report["quality"]["figures"]]


def small_report(answers):
    analysis = analyze(np.asarray(answers))
    return {"n": analysis["n"], "analysis": analysis, "systems": [], "languages": {}}


def conduct_report(*, evaluations=0, feedback=0, blocks=0, sessions=None):
    """The conduct's parts of a report, as exports.report.data gives them."""
    statuses = sessions or {}
    return {
        "completion": {"n": evaluations, "mean_minutes": None, "sd_minutes": None},
        "feedback": {"sessions": feedback, "administrators": min(feedback, 1), "questions": []},
        "prompts": {"verified": 0, "glatteis": 0, "blocks": blocks, "overrides": 0},
        "quality": {"n": evaluations, "kept": evaluations, "left_out": 0, "flags": []},
        "exclusions": {
            "pilot": 3,
            "withdrawn": 2,
            "ineligible": 1,
            "complete": statuses.get("complete", 0),
            "abandoned": statuses.get("abandoned", 0),
            "in_progress": statuses.get("in_progress", 0),
        },
    }


def conduct_applying(report):
    return [key for key in keys_applying(report) if key in CONDUCT]


def test_conduct_sections_without_figures_in_the_report_are_left_out():
    # Only withdrawals, screen-outs and pilots: nothing the data hold.
    assert conduct_applying(conduct_report()) == []
    assert conduct_applying({"n": 0, "systems": [], "languages": {}}) == []
    # Sessions under way: their status, their blocks, no SHS or feedback yet.
    under_way = conduct_report(blocks=3, sessions={"in_progress": 2})
    assert conduct_applying(under_way) == ["prompts", "exclusions"]
    abandoned = conduct_report(evaluations=1, sessions={"abandoned": 1})
    assert conduct_applying(abandoned) == ["completion", "quality", "exclusions"]
    done = conduct_report(evaluations=4, feedback=2, blocks=4, sessions={"complete": 2})
    assert conduct_applying(done) == CONDUCT


def test_sections_without_figures_in_the_report_are_left_out():
    rng = np.random.default_rng(5)
    assert keys_applying(small_report(np.zeros((0, 10), dtype=int))) == ["scores"]
    two = rng.integers(-2, 3, size=(2, 10))
    assert keys_applying(small_report(two)) == ["scores", "answers"]
    # An item nobody varied on: psych::alpha and the factor model cannot run.
    constant_q6 = rng.integers(-2, 3, size=(20, 10))
    constant_q6[:, 5] = -2
    left = {"reliability", "omega"}
    assert set(keys_applying(small_report(constant_q6))) == SHS_KEYS - left
    # R's shapiro.test stops at 5000 values: the test's figures are not compared.
    large = {"n": 5001, "analysis": {"n": 5001, "shapiro": {"W": 0.99, "p": 0.2}}}
    assert "normality" not in keys_applying(large)
