"""The stored study report in the reader's language.

A report is computed once and stored (ExportJob.report_data) with English
texts; the page and the downloadable file show it in a language chosen when
they are rendered. Texts are looked up again by their keys (feedback question
and option codes here; items and dimensions by scoring.web.report.analysis_context,
which formats the analysis as every other analysis of the platform), so a
report stored before this module existed renders translated too.
"""

from copy import deepcopy

from django.utils.translation import get_language_info, ngettext
from django.utils.translation import gettext as _

from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import DIMENSIONS_BY_KEY
from scoring.web.report import analysis_context


def _feedback_questions(questions: list[dict], language: str) -> None:
    for question in questions:
        source = FEEDBACK.question(question["key"])
        question["text"] = source.text_in(language)
        labels = dict(source.choices(language))
        for option in question["options"]:
            option["label"] = labels.get(option["code"], option["label"])
        if question.get("most_frequent") is not None:
            # The same rule as the report's: the option most administrators chose.
            top = max(question["options"], key=lambda option: option["administrators"])
            question["most_frequent"] = top["label"]


def sample_note(report: dict) -> str:
    """The sample and prompting regime, stated next to every score (active language)."""
    excluded = report["exclusions"]
    counts = {
        "evaluations": ngettext(
            "%(count)s submitted evaluation", "%(count)s submitted evaluations", report["n"]
        )
        % {"count": report["n"]},
        "participants": ngettext(
            "%(count)s participant", "%(count)s participants", report["participants"]
        )
        % {"count": report["participants"]},
        "administrators": ngettext(
            "%(count)s administrator", "%(count)s administrators", report["administrators"]
        )
        % {"count": report["administrators"]},
    }
    return _(
        "N = %(evaluations)s from %(participants)s and %(administrators)s (pilot sessions "
        "excluded: %(pilot)s; withdrawn: %(withdrawn)s; screened out: %(ineligible)s). "
        "Prompting regime: %(regime)s Scores describe perceived reliability under this "
        "regime and sample."
    ) % {
        **counts,
        "pilot": excluded["pilot"],
        "withdrawn": excluded["withdrawn"],
        "ineligible": excluded["ineligible"],
        "regime": report["study"]["prompting_regime"],
    }


def _quality_labels(quality: dict, language: str) -> None:
    """Names and rules of the quality flags and the side-by-side figures (§8.10)."""
    rules = {
        "speeding": _("Speeding: SHS submitted in under %(seconds)s s")
        % {"seconds": quality["speeding_seconds"]},
        "straight_lining": _("Straight-lining: all ten answers the same"),
        "inconsistent_pairs": _("Inconsistent pairs: at least one pair with |c| > 0.25"),
        "too_few_turns": _("Too few turns: fewer prompts in the block than the study minimum"),
    }
    for flag in quality["flags"]:
        flag["label"] = rules.get(flag["key"], flag["key"])
    names = {
        "alpha": _("Cronbach's alpha (ten items)"),
        "shs_mean": _("SHS mean"),
        "shs_sd": _("SHS standard deviation"),
    }
    for row in quality["figures"]:
        key = row["figure"].removeprefix("mean_")
        if key in DIMENSIONS_BY_KEY:
            label = DIMENSIONS_BY_KEY[key].label_in(language)
            names[row["figure"]] = _("Mean %(dimension)s") % {"dimension": f"{label} ({key})"}
        row["label"] = names.get(row["figure"], row["figure"])
        row["signed"] = row["figure"] != "alpha" and row["figure"] != "shs_sd"


def localized(report: dict, language: str) -> dict:
    """A copy of `report` with every text in `language`, and the sentences (sample
    note, the analysis' caveats) in the active language, which the caller sets
    to `language`. The study's own figures stay numbers (the template formats
    them); the analysis is formatted here (`shs_analysis`, with the plots drawn
    when the report was computed)."""
    report = deepcopy(report)
    _feedback_questions(report.get("feedback", {}).get("questions", []), language)
    report["language_names"] = {
        code: str(get_language_info(code)["name_translated"])
        for code in report.get("languages", {})
    }
    report["sample_note"] = sample_note(report)
    if report.get("quality"):  # reports stored before §8.10 have no quality section
        _quality_labels(report["quality"], language)
    report["shs_analysis"] = analysis_context(
        report["analysis"],
        language=language,
        figures=report.get("figures") or {},
        sample_note=report["sample_note"],
    )
    return report
