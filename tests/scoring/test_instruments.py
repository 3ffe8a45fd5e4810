"""The instrument definitions agree with themselves, in every language."""

import pytest

from scoring.instruments.common import LANGUAGES
from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.eligibility import ELIGIBILITY, eligibility_criteria
from scoring.instruments.feedback import FEEDBACK
from scoring.instruments.shs import (
    BANDS,
    CREDIT,
    DIMENSIONS,
    INTERPRETATION_NOTE,
    ITEMS,
    SCALE,
)


def test_items_and_dimensions_describe_the_same_pairs():
    # Each item names its dimension and polarity, and each dimension its two
    # items: the pairing is written down twice, so the two must agree.
    from_items = {(item.dimension, item.polarity): item.key for item in ITEMS}
    from_dimensions = {
        **{(d.key, +1): d.positive_item for d in DIMENSIONS},
        **{(d.key, -1): d.negative_item for d in DIMENSIONS},
    }
    assert from_items == from_dimensions


def every_text():
    yield "credit", CREDIT
    yield "interpretation", INTERPRETATION_NOTE
    for item in ITEMS:
        yield item.key, item.text
    for dimension in DIMENSIONS:
        yield dimension.key, dimension.label
    for band in BANDS:
        yield band.code, band.label
    for option in SCALE:
        yield f"scale {option.code}", option.label
    for questionnaire in (FEEDBACK, DEMOGRAPHICS):
        yield questionnaire.key, questionnaire.title
        for question in questionnaire:
            yield question.key, question.text
            for option in question.options:
                yield f"{question.key} {option.code}", option.label
    for criterion in ELIGIBILITY:
        yield criterion.key, criterion.text


def test_every_text_exists_in_every_language():
    # `translated` falls back to English, so a missing translation would not
    # show as an error anywhere else.
    for name, text in every_text():
        assert set(text) == set(LANGUAGES), name
        assert all(value.strip() for value in text.values()), name


def test_by_default_the_fluency_question_is_the_papers():
    # The paper (6.4): "fluency in German or English", the languages of its study.
    fluent = next(c for c in eligibility_criteria() if c.key == "fluent")
    assert fluent.text == {
        "en": "Are you fluent in German or English?",
        "de": "Sprechen Sie fließend Deutsch oder Englisch?",
        "fr": "Parlez-vous couramment l'allemand ou l'anglais ?",
    }


def test_the_fluency_question_names_the_studys_languages_in_every_language():
    fluent = next(c for c in eligibility_criteria(["fr", "en", "de"]) if c.key == "fluent")
    assert fluent.text == {
        "en": "Are you fluent in German, English or French?",
        "de": "Sprechen Sie fließend Deutsch, Englisch oder Französisch?",
        "fr": "Parlez-vous couramment l'allemand, l'anglais ou le français ?",
    }
    only_french = next(c for c in eligibility_criteria(["fr"]) if c.key == "fluent")
    assert only_french.text["fr"] == "Parlez-vous couramment le français ?"


def test_the_other_criteria_stay_the_papers():
    criteria = eligibility_criteria(["fr"])
    assert [c.key for c in criteria] == [c.key for c in ELIGIBILITY]
    assert [c for c in criteria if c.key != "fluent"] == [
        c for c in ELIGIBILITY if c.key != "fluent"
    ]
    assert next(c for c in criteria if c.key == "fluent").eligible_answer is True


@pytest.mark.parametrize("languages", [[], ["xx"], ["en", "it"]])
def test_a_fluency_question_needs_known_languages(languages):
    with pytest.raises(ValueError):
        eligibility_criteria(languages)
