"""The replication script's factor-model sections (validation.replication.factors):
they are in the script only when the report fitted a model, and they name exactly
the report's figures of the models it fitted, each with its rule. No R here."""

from exports.replication.figures import recomputed_figures
from exports.replication.script import r_literal
from scoring.stats.factors.fit import HEYWOOD, problem
from scoring.stats.factors.invariance import MIN_GROUP, TOO_FEW_GROUPS
from validation.replication.factors import CFA, INVARIANCE, SECTIONS, invariance_parameters


def fitted_model(model):
    entry = {"estimate": 0.7, "se": 0.04, "ci95": [0.62, 0.78]}
    return {
        "model": model,
        "n": 320,
        "converged": True,
        "identified": True,
        "problem": None,
        "chi2": 27.07,
        "df": 25,
        "p": 0.35,
        "cfi": 0.99,
        "tli": 0.99,
        "rmsea": 0.016,
        "rmsea_ci90": [0.0, 0.049],
        "srmr": 0.022,
        "loadings": [{"item": "q1", "factor": "FA", **entry}],
        "factor_correlations": [{"factors": ["FA", "SR"], **entry}],
    }


def improper_model(model):
    # What the report holds for a model it gives no figures for.
    return {
        "model": model,
        "n": 320,
        "converged": True,
        "identified": True,
        **problem(HEYWOOD, items="q7"),
    }


def cfa(five, one, difference=None):
    no_comparison = {"problem": "No comparison", "message": "", "params": {}}
    return {
        "n": 320,
        "five": five,
        "one": one,
        "difference": difference or no_comparison,
        "warning_sentences": [{"text": "", "params": {"n": 320, "needed": 200}}],
    }


def invariance_result(fitted):
    result = {
        "n": 214 if fitted else 0,
        "groups": [{"label": "en", "n": 108}, {"label": "de", "n": 106}] if fitted else [],
        "too_small_groups": [{"label": "fr", "n": 40}],
        "warning_sentences": [{"params": {"group": "fr", "n": 40}}],
        "without_group": 3,
    }
    if not fitted:
        found = problem(TOO_FEW_GROUPS, needed=MIN_GROUP, grouping="language", found=0)
        return {**result, **found, "models": {}, "differences": {}}
    model = {"converged": True, "problem": None, "chi2": 65.8, "df": 75, "p": 0.77}
    model |= {"cfi": 1.0, "tli": 1.02, "rmsea": 0.0}
    step = {"problem": None, "delta_chi2": 9.3, "delta_df": 10, "p": 0.5, "delta_cfi": 0.0}
    step |= {"delta_rmsea": 0.0, "holds": True, "params": {"delta_cfi": 0.0}}
    return {
        **result,
        "problem": None,
        "models": {"configural": model, "metric": model, "scalar": model},
        "differences": {"metric": step, "scalar": step},
    }


def report(validation):
    return {"n": 320, "validation": validation}


def figures_of(section, data):
    return recomputed_figures(data, (section,))["figures"]


def test_both_sections_are_registered_in_order():
    assert [section.key for section in SECTIONS] == ["cfa", "invariance"]
    assert all(section.script.is_file() and section.packages == ("lavaan",) for section in SECTIONS)


def test_cfa_is_left_out_without_a_fitted_model():
    assert not CFA.applies({"n": 20})  # no validation section at all
    assert not CFA.applies(report({"n": 40, "skipped": {"cfa": "not asked"}}))
    neither = cfa(improper_model("five"), improper_model("one"))
    assert not CFA.applies(report({"cfa": neither}))
    assert CFA.applies(report({"cfa": cfa(improper_model("five"), fitted_model("one"))}))


def test_cfa_names_every_figure_of_both_models_and_their_difference():
    difference = {"problem": None, "chi2": 103.3, "df": 10, "p": 1e-17, "params": {"df": 10}}
    data = report({"cfa": cfa(fitted_model("five"), fitted_model("one"), difference)})
    figures = figures_of(CFA, data)
    rules = {path: figure["rule"] for path, figure in figures.items()}
    assert rules["validation.cfa.n"] == "closed_form"
    assert rules["validation.cfa.five.chi2"] == "chi_square"
    assert rules["validation.cfa.one.df"] == "closed_form"
    assert rules["validation.cfa.five.rmsea_ci90.1"] == "iterative"
    assert rules["validation.cfa.one.srmr"] == "iterative"
    assert rules["validation.cfa.five.loadings.0.estimate"] == "iterative"
    assert rules["validation.cfa.five.factor_correlations.0.ci95.0"] == "iterative"
    assert rules["validation.cfa.difference.chi2"] == "chi_square"
    assert rules["validation.cfa.difference.df"] == "closed_form"
    assert rules["validation.cfa.difference.p"] == "iterative"
    # Per model: n, chi2, df, p, cfi, tli, rmsea, 2 bounds, srmr, and 4 numbers
    # for each of one loading and one correlation.
    assert len(figures) == 1 + 2 * (10 + 4 + 4) + 3
    # The verdict's rounded copies and the warnings' counts are text, not figures.
    assert not any(".params." in path for path in figures)


def test_cfa_names_nothing_of_a_model_the_report_gives_no_figures_for():
    data = report({"cfa": cfa(improper_model("five"), fitted_model("one"))})
    paths = set(figures_of(CFA, data))
    five = {path for path in paths if path.startswith("validation.cfa.five.")}
    assert five == {"validation.cfa.five.n"}
    assert not any(path.startswith("validation.cfa.difference.") for path in paths)
    assert "validation.cfa.one.loadings.0.se" in paths


def test_invariance_is_left_out_when_no_grouping_was_fitted():
    assert not INVARIANCE.applies({"n": 20})
    assert not INVARIANCE.applies(report({"skipped": {"invariance": "one language"}}))
    assert not INVARIANCE.applies(report({"invariance": {"language": invariance_result(False)}}))
    groupings = {"language": invariance_result(False), "gender": invariance_result(True)}
    assert INVARIANCE.applies(report({"invariance": groupings}))


def test_invariance_names_the_models_differences_and_group_sizes():
    groupings = {"language": invariance_result(True), "gender": invariance_result(False)}
    figures = figures_of(INVARIANCE, report({"invariance": groupings}))
    rules = {path: figure["rule"] for path, figure in figures.items()}
    language = "validation.invariance.language"
    assert rules[f"{language}.models.scalar.chi2"] == "chi_square"
    assert rules[f"{language}.models.metric.df"] == "closed_form"
    assert rules[f"{language}.models.configural.tli"] == "iterative"
    assert rules[f"{language}.differences.metric.delta_chi2"] == "chi_square"
    assert rules[f"{language}.differences.scalar.delta_df"] == "closed_form"
    assert rules[f"{language}.differences.scalar.delta_rmsea"] == "iterative"
    assert rules[f"{language}.groups.1.n"] == "closed_form"
    assert rules[f"{language}.too_small_groups.0.n"] == "closed_form"
    # The grouping that was not fitted: its counts, nothing else.
    gender = sorted(path for path in rules if path.startswith("validation.invariance.gender"))
    assert gender == [
        "validation.invariance.gender.n",
        "validation.invariance.gender.too_small_groups.0.n",
        "validation.invariance.gender.without_group",
    ]
    # n and without_group, three groups' sizes, 3 models x 6, 2 differences x 5.
    assert len(rules) == 2 + 3 + 18 + 10 + len(gender)
    assert not any(".params." in path or "warning_sentences" in path for path in rules)


def test_invariance_parameters_name_the_grouping_and_its_english_labels():
    languages_only = invariance_parameters(report({"grouping": None}))
    assert languages_only["invariance_grouping"][0] is None
    assert r_literal(languages_only["grouping_labels"][0]) == "list()"
    assert languages_only["min_group_size"][0] == MIN_GROUP
    by_gender = invariance_parameters(report({"grouping": "gender"}))
    assert by_gender["invariance_grouping"][0] == "gender"
    labels = by_gender["grouping_labels"][0]
    assert labels["1"] == "Female" and labels["2"] == "Male"
    assert "9" not in labels  # "prefer not to say" forms no group
