"""The validation section as a researcher reads it in de and fr: each method note a
translated sentence naming the method and its reference (no module or function
names), reasons that read right for one and for many, and invariance groups
named by the codebook's labels in the report's language, never by their codes."""

import html
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext

from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.stats.caveats import ZERO_VARIANCE, sentence
from scoring.stats.factors.cfa import SMALL_SAMPLE
from scoring.stats.factors.fit import FEW_ROWS, HEYWOOD, ITEM_CONSTANT
from scoring.stats.factors.invariance import TOO_SMALL, invariance
from scoring.stats.nested.clustered import FEW_VALID, SCORE_CONSTANT
from scoring.stats.nested.groups import GROUP_TOO_SMALL
from scoring.stats.validation import validation_analysis
from scoring.web.readable import reason as readable_reason
from validation.dataset import group_labels
from validation.simulation.latent import simulate_latent, to_validation_data
from validation.templatetags.validation_text import explain, group_label

LANGUAGES = ("de", "fr")
# A code path ("scoring.scores.engine") or a call ("score_array(", "sqrt(", "fit()").
DOTTED_PATH = re.compile(r"\b[a-z_]+\.[a-z_]+\.[a-z_]+")
CALL = re.compile(r"\b[A-Za-z]*_[A-Za-z_]*\(|\b\w+\(\)|\bsqrt\(")
LIBRARIES = ("semopy", "statsmodels", "MixedLM", "scipy", "numpy")


@pytest.fixture(scope="module")
def validation():
    """A simulated study in three languages with SUS, a retest wave and gender codes
    (1 female, 2 male, 3 diverse) named as validation.dataset names a study's."""
    sample = simulate_latent(
        300,
        seed=11,
        languages=("en", "de", "fr"),
        scales=("sus",),
        retest_share=0.3,
        groups=("1", "1", "1", "2", "2", "2", "3"),
        group_name="gender",
    )
    data = to_validation_data(sample)
    codes = [int(code) for code in data.group]
    data = replace(data, group=group_labels("gender", codes))
    return validation_analysis(data, resamples=50, seed=3)


def _render(validation: dict, language: str) -> str:
    with translation.override(language):
        return render_to_string("validation/_validation.html", {"validation": validation})


def _text(page: str) -> str:
    """What a reader sees: no plot, no tags, entities resolved."""
    page = re.sub(r"<svg.*?</svg>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def _in(language: str, message: str) -> str:
    with translation.override(language):
        return gettext(message)


def _explained_in(language: str, value) -> str:
    with translation.override(language):
        return explain(value, "text")


def _shown_method_notes(validation: dict) -> list[str]:
    """The method notes the section prints: under each part, and as the rows of the
    participant-share table."""
    share = validation["nested"]["participant_share"]
    return [
        validation["cfa"]["method"],
        next(iter(validation["invariance"].values()))["method"],
        validation["convergent"]["method"],
        validation["retest"]["method"],
        validation["nested"]["alpha_by_system"]["method"],
        share["intercept_only"]["method"],
        share["with_system"]["method"],
        share["anova"]["method"],
    ]


def _method_notes(value) -> list[str]:
    """Every "method" text anywhere in a part's figures."""
    if isinstance(value, dict):
        found = [value["method"]] if isinstance(value.get("method"), str) else []
        return found + [note for item in value.values() for note in _method_notes(item)]
    if isinstance(value, list):
        return [note for item in value for note in _method_notes(item)]
    return []


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_method_note_is_shown_translated(validation, language):
    page = _render(validation, language)
    shown = _shown_method_notes(validation)
    assert len(set(shown)) == len(shown) == 8
    printed = [html.unescape(note) for note in re.findall(r'<p class="method">(.*?)</p>', page)]
    with translation.override(language):
        translated = {note: gettext(note) for note in shown}
    for english, in_language in translated.items():
        assert in_language != english, f"no {language} translation: {english[:60]}"
        assert english not in _text(page)
        assert in_language in _text(page)
    assert printed and set(printed) <= set(translated.values())


@pytest.mark.parametrize("language", ("en", *LANGUAGES))
def test_the_section_names_no_code(validation, language):
    text = _text(_render(validation, language))
    assert DOTTED_PATH.findall(text) == []
    assert CALL.findall(text) == []
    assert [name for name in LIBRARIES if name in text] == []


def test_the_method_notes_of_cfa_invariance_and_nested_data_are_sentences_for_researchers(
    validation,
):
    notes = set()
    for part in ("cfa", "invariance", "nested"):
        notes |= set(_method_notes(validation[part]))
    notes |= set(_shown_method_notes(validation))
    assert len(notes) >= 12
    for note in notes:
        assert note[0].isupper() and note.endswith("."), note
        assert not DOTTED_PATH.search(note) and not CALL.search(note), note
        assert not any(name in note for name in LIBRARIES), note
        for language in LANGUAGES:
            with translation.override(language):
                assert gettext(note) != note, f"no {language} translation: {note[:60]}"


# Each reason with a count (or a list) of one and of two, in every language.
COUNTED = {
    "rows": (FEW_ROWS, lambda count: {"n": count, "p": 10}),
    "group size": (GROUP_TOO_SMALL, lambda count: {"n": count, "needed": 30}),
    "cfa sample": (SMALL_SAMPLE, lambda count: {"n": count, "needed": 200}),
    "resamples": (FEW_VALID, lambda count: {"resamples": count}),
    "small group": (TOO_SMALL, lambda count: {"group": "Female", "n": count}),
    "scores": (SCORE_CONSTANT, lambda count: {"scores": ", ".join(["FA", "SR"][:count])}),
    "items": (ITEM_CONSTANT, lambda count: {"items": ", ".join(["q4", "q5"][:count])}),
    "heywood": (HEYWOOD, lambda count: {"items": ", ".join(["q4", "q5"][:count])}),
}
# A number that does not agree with its noun, or a verb in the singular after a list.
DISAGREEING = {
    "en": r"\b1 (rows|evaluations|participants|resamples|items)\b|\b[2-9] (row|evaluation|"
    r"participant|resample)\b(?!s)|(,| and) \w+ (has|is)\b",
    "de": r"\b1 (Zeilen|Bewertungen|Teilnehmenden|Stichproben)\b|\b[2-9] (Zeile|Bewertung|"
    r"teilnehmenden Person)\b(?!en)|(,| und) \w+ (hat|ist)\b",
    "fr": r"\b1 (lignes|évaluations|participants|rééchantillons)\b|\b[2-9] (ligne|évaluation|"
    r"participant)\b(?!s)|(,| et) \w+ (a|est)\b",
}


def _one_and_two(message: str, params) -> tuple[str, str]:
    return explain(sentence(message, **params(1))), explain(sentence(message, **params(2)))


@pytest.mark.parametrize("language", ("en", *LANGUAGES))
@pytest.mark.parametrize("case", sorted(COUNTED))
def test_a_reason_reads_right_for_one_and_for_two(case, language):
    message, params = COUNTED[case]
    with translation.override(language):
        one, two = _one_and_two(message, params)
    for text in (one, two):
        assert "{" not in text and not re.search(DISAGREEING[language], text), text
    if language != "en":
        assert one != sentence(message, **params(1))["text"]  # translated
    # Only the count (or the list) changes: no word depends on it.
    if "FA" in one or "q4" in one:
        assert one.replace("FA", "FA, SR").replace("q4", "q4, q5") == two
    else:
        assert re.sub(r"\b1\b", "#", one) == re.sub(r"\b2\b", "#", two)


@pytest.mark.parametrize("language", ("en", *LANGUAGES))
def test_a_list_of_items_without_variance_reads_right_in_the_analysis_warnings(language):
    # scoring.web.readable names the items by number and joins them in the language.
    with translation.override(language):
        one, two = (
            readable_reason({"reason": "", "message": ZERO_VARIANCE, "params": {"items": items}})
            for items in ("q4", "q4 and q5")
        )
    assert one.endswith("Q4") and two.endswith("Q5")
    assert not re.search(DISAGREEING[language], one + " " + two)


@pytest.mark.parametrize(
    ("language", "one", "two"),
    [
        ("en", "1 evaluation by 1 participant (", "2 evaluations by 2 participants ("),
        ("de", "1 Bewertung von 1 teilnehmenden Person (", "2 Bewertungen von 2 Teilnehmenden ("),
        ("fr", "1 évaluation par 1 participant (", "2 évaluations par 2 participants ("),
    ],
)
def test_the_section_counts_evaluations_and_participants_in_the_right_number(language, one, two):
    for count, expected in ((1, one), (2, two)):
        page = _render({"n": count, "participants": count, "skipped": {}}, language)
        assert expected in _text(page)


@pytest.mark.parametrize(
    ("language", "one", "two"),
    [
        ("en", "(1 participant), seed 7, 1 resample,", "(2 participants), seed 7, 2 resamples,"),
        (
            "de",
            "(1 teilnehmende Person), Seed 7, 1 Stichprobe,",
            "(2 Teilnehmende), Seed 7, 2 Stichproben,",
        ),
        (
            "fr",
            "(1 participant), graine 7, 1 rééchantillonnage,",
            "(2 participants), graine 7, 2 rééchantillonnages,",
        ),
    ],
)
def test_the_nested_bootstrap_counts_participants_and_resamples_in_the_right_number(
    language, one, two
):
    for count, expected in ((1, one), (2, two)):
        nested = {"bootstrap": {"seed": 7, "resamples": count, "clusters": count}}
        with translation.override(language):
            page = render_to_string("validation/_nested.html", {"nested": nested})
        assert expected in _text(page)


@pytest.mark.parametrize(
    ("language", "labels"),
    [
        ("en", ("Female", "Male", "Diverse")),
        ("de", ("Weiblich", "Männlich", "Divers")),
        ("fr", ("Féminin", "Masculin", "Divers")),
    ],
)
def test_invariance_by_gender_names_the_groups_by_the_codebooks_labels(
    validation, language, labels
):
    by_gender = validation["invariance"]["gender"]
    # The JSON is English: the codebook's labels, not the codes 1, 2, 3.
    assert {group["label"] for group in by_gender["groups"]} == {"Female", "Male", "Diverse"}
    page = _render(validation, language)
    section = _text(page.split('id="validation-invariance"')[1].split("<h3")[0])
    gender = section.split(_in(language, "Across genders"))[1]
    for label in labels:
        assert re.search(rf"\b{label} \(n = \d+\)", gender), label
    assert not re.search(r"\b[123] \(n = ", gender)
    # The languages by their names, here and in the reliability table of the nested data.
    names = {
        "en": ("German", "English"),
        "de": ("Deutsch", "Englisch"),
        "fr": ("Allemand", "Anglais"),
    }
    nested = _text(page.split('id="validation-nested"')[1])
    for name in names[language]:
        assert f"{name} (n = 200)" in section and f" {name} " in nested


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_group_too_small_is_named_in_the_language_in_the_list_and_in_the_warning(language):
    answers = np.random.default_rng(2).integers(-2, 3, size=(60, 10))
    genders = group_labels("gender", [1] * 40 + [3] * 20)
    result = invariance(answers, genders, grouping="gender")
    assert result["too_small"] == ["Female (n=40)", "Diverse (n=20)"]
    with translation.override(language):
        page = render_to_string("validation/_invariance.html", {"invariance": {"gender": result}})
        female = group_label("Female")
        listed = f"{female} (n = 40), {group_label('Diverse')} (n = 20)."
    text = _text(page)
    assert female != "Female" and listed in text
    assert f"{female} (n = 40)" in _explained_in(language, result["warning_sentences"][0])
    assert "Female" not in text and "gender" not in text


def test_a_report_stored_with_codes_and_a_language_group_are_named_too():
    with translation.override("de"):
        # Reports computed before groups carried labels hold the codes.
        assert group_label("2", "gender") == "Männlich"
        assert group_label("4", "education") == "Bachelor"
        assert group_label("fr", "language") == "Französisch"
        # A column of an answer file keeps its own labels.
        assert group_label("2", "team") == "2"
    with translation.override("fr"):
        assert group_label("Prefer not to say") == "Je préfère ne pas répondre"


def test_an_english_label_names_one_answer_of_the_demographics():
    # group_label finds an answer by its English label across the questions.
    labels = [option.label["en"] for question in DEMOGRAPHICS for option in question.options]
    repeated = {label for label in labels if labels.count(label) > 1}
    assert repeated == {"Prefer not to say"}


def test_group_labels_leave_out_no_answer_and_prefer_not_to_say():
    labels = group_labels("age_band", [1, 6, None, 9])
    assert list(labels) == ["18–24", "65 or older", "", ""]


# The modules whose sentences the section shows (parts of other modules have their own tests).
SENTENCE_MODULES = (
    "scoring/stats/caveats.py",
    "scoring/stats/factors/cfa.py",
    "scoring/stats/factors/fit.py",
    "scoring/stats/factors/invariance.py",
    "scoring/stats/nested/clustered.py",
    "scoring/stats/nested/groups.py",
    "scoring/stats/nested/icc.py",
    "validation/templatetags/validation_text.py",
)
MARKED = re.compile(r'gettext_noop\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\)')


def _marked_messages(path: str) -> list[str]:
    source = (Path(__file__).resolve().parents[2] / path).read_text(encoding="utf-8")
    return [
        "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', found)).replace('\\"', '"')
        for found in MARKED.findall(source)
    ]


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_sentence_of_these_analyses_is_translated(language):
    messages = [message for path in SENTENCE_MODULES for message in _marked_messages(path)]
    assert len(messages) > 60
    with translation.override(language):
        missing = [message for message in messages if gettext(message) == message]
    assert missing == []
