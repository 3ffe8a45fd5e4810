"""The instrument definitions agree with themselves, in every language."""

from scoring.instruments.common import LANGUAGES
from scoring.instruments.demographics import DEMOGRAPHICS
from scoring.instruments.eligibility import ELIGIBILITY
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
