"""The companion scales (docs/design/validation.md §14.1): each scale's published score,
its refusals, its keying, and its wording in every language it ships."""

import numpy as np
import pytest

from scoring.instruments.companions import COMPANION_SCALES, missing_languages
from scoring.instruments.companions.scs import SCS
from scoring.instruments.companions.sus import SUS
from scoring.instruments.companions.trust import TRUST

SCALES = list(COMPANION_SCALES.values())


def random_rows(scale, n=200, seed=16):
    rng = np.random.default_rng(seed)
    return rng.integers(scale.codes[0], scale.codes[-1] + 1, size=(n, len(scale.items)))


def answers_of(scale, row):
    return {key: int(code) for key, code in zip(scale.item_keys, row, strict=True)}


# --- Independent computations, written out as the publications state them ---


def brooke_sus(row):
    # Brooke (1996): odd items contribute (position - 1), even items (5 - position);
    # the sum of contributions times 2.5.
    total = 0
    for number, code in enumerate(row, start=1):
        total += (code - 1) if number % 2 == 1 else (5 - code)
    return total * 2.5


def holzinger_scs(row):
    # Holzinger, Carrington & Müller (2020): the sum of the ten ratings over 50.
    total = 0
    for code in row:
        total += code
    return total / 50


def jian_trust(row):
    # Items 1-5 (distrust) turned round on the 1-7 scale, then the mean of twelve.
    total = 0
    for number, code in enumerate(row, start=1):
        total += (8 - code) if number <= 5 else code
    return total / 12


@pytest.mark.parametrize(
    ("scale", "by_hand"), [(SUS, brooke_sus), (SCS, holzinger_scs), (TRUST, jian_trust)]
)
def test_score_agrees_with_the_publications_rule_on_random_answers(scale, by_hand):
    rows = random_rows(scale)
    expected = [by_hand(row) for row in rows]
    assert scale.score_array(rows) == pytest.approx(expected)
    assert [scale.score(answers_of(scale, row)) for row in rows[:20]] == pytest.approx(
        expected[:20]
    )


def test_sus_worked_examples():
    # Brooke's scoring: all-neutral answers give 50; agreeing with every odd
    # (positive) item and disagreeing with every even one gives the best, 100;
    # the opposite gives 0.
    assert SUS.score({f"sus{n}": 3 for n in range(1, 11)}) == 50.0
    best = {f"sus{n}": 5 if n % 2 else 1 for n in range(1, 11)}
    worst = {f"sus{n}": 1 if n % 2 else 5 for n in range(1, 11)}
    assert SUS.score(best) == 100.0
    assert SUS.score(worst) == 0.0


def test_scs_range_as_the_paper_defines_it():
    # The paper's range: "strongly disagree" throughout gives 10/50 = 0.2,
    # "strongly agree" throughout 50/50 = 1.0; all-neutral gives 30/50 = 0.6.
    assert SCS.score({f"scs{n}": 1 for n in range(1, 11)}) == pytest.approx(0.2)
    assert SCS.score({f"scs{n}": 5 for n in range(1, 11)}) == pytest.approx(1.0)
    assert SCS.score({f"scs{n}": 3 for n in range(1, 11)}) == pytest.approx(0.6)
    assert SCS.score_range == (0.2, 1.0)


def test_trust_ends_and_midpoint():
    # Full trust: every distrust item "not at all" (1), every trust item
    # "extremely" (7) -> 7. The reverse -> 1. The midpoint 4 everywhere -> 4.
    full = {f"trust{n}": 1 if n <= 5 else 7 for n in range(1, 13)}
    none = {f"trust{n}": 7 if n <= 5 else 1 for n in range(1, 13)}
    assert TRUST.score(full) == pytest.approx(7.0)
    assert TRUST.score(none) == pytest.approx(1.0)
    assert TRUST.score({f"trust{n}": 4 for n in range(1, 13)}) == pytest.approx(4.0)


@pytest.mark.parametrize("scale", SCALES, ids=lambda scale: scale.key)
def test_a_row_with_a_missing_answer_scores_nan(scale):
    rows = random_rows(scale, n=3).astype(float)
    rows[1, 2] = np.nan
    scores = scale.score_array(rows)
    assert np.isnan(scores[1]) and not np.isnan(scores[0]) and not np.isnan(scores[2])


def complete(scale):
    return {key: scale.codes[0] for key in scale.item_keys}


@pytest.mark.parametrize("scale", SCALES, ids=lambda scale: scale.key)
@pytest.mark.parametrize("bad", [0, 99, -1, None, True, False, 3.0, "3"], ids=lambda bad: repr(bad))
def test_score_refuses_an_answer_naming_the_item(scale, bad):
    last = scale.item_keys[-1]
    answers = complete(scale) | {last: bad}
    if bad is None:
        del answers[last]
    with pytest.raises(ValueError, match=rf"{scale.key}: {last} must be one of"):
        scale.score(answers)


@pytest.mark.parametrize("scale", SCALES, ids=lambda scale: scale.key)
def test_score_refuses_one_past_either_end(scale):
    for code in (scale.codes[0] - 1, scale.codes[-1] + 1):
        with pytest.raises(ValueError, match=rf"{scale.key}: {scale.item_keys[0]} must"):
            scale.score(complete(scale) | {scale.item_keys[0]: code})


@pytest.mark.parametrize("scale", SCALES, ids=lambda scale: scale.key)
def test_score_refuses_the_first_bad_item_it_meets(scale):
    answers = complete(scale) | {scale.item_keys[1]: 0, scale.item_keys[4]: 0}
    with pytest.raises(ValueError, match=rf": {scale.item_keys[1]} must"):
        scale.score(answers)


@pytest.mark.parametrize("scale", SCALES, ids=lambda scale: scale.key)
def test_keyed_turns_exactly_the_reversed_items(scale):
    rows = random_rows(scale, n=50)
    keyed = scale.keyed(rows)
    low, high = scale.codes[0], scale.codes[-1]
    for column, item in enumerate(scale.items):
        expected = low + high - rows[:, column] if item.reversed else rows[:, column]
        assert keyed[:, column] == pytest.approx(expected), item.key


def test_which_items_are_reversed():
    assert [item.number for item in SUS.items if item.reversed] == [2, 4, 6, 8, 10]
    assert not any(item.reversed for item in SCS.items)
    assert [item.number for item in TRUST.items if item.reversed] == [1, 2, 3, 4, 5]


def test_trust_keyed_is_eight_minus_the_code_on_distrust_items():
    row = np.array([[1, 2, 3, 6, 7, 1, 2, 3, 4, 5, 6, 7]])
    assert TRUST.keyed(row)[0].tolist() == [7, 6, 5, 2, 1, 1, 2, 3, 4, 5, 6, 7]


def test_registered_in_the_forms_order():
    assert list(COMPANION_SCALES) == ["sus", "scs", "trust"]
    assert [len(scale.items) for scale in SCALES] == [10, 10, 12]
    assert [scale.codes for scale in SCALES] == [
        (1, 2, 3, 4, 5),
        (1, 2, 3, 4, 5),
        (1, 2, 3, 4, 5, 6, 7),
    ]


def test_item_keys_are_unique_across_all_scales():
    keys = [key for scale in SCALES for key in scale.item_keys]
    assert len(keys) == len(set(keys))
    assert all(key.startswith(scale.key) for scale in SCALES for key in scale.item_keys)
    assert [item.number for item in TRUST.items] == list(range(1, 13))


def test_missing_languages_names_each_scale_without_the_study_language():
    assert missing_languages(["sus", "scs", "trust"], ["en"]) == {}
    assert missing_languages(["sus"], ["en", "de", "fr"]) == {}
    assert missing_languages(["sus", "scs", "trust"], ["en", "de"]) == {
        "scs": ["de"],
        "trust": ["de"],
    }
    assert missing_languages(["trust"], ["fr", "de"]) == {"trust": ["fr", "de"]}
    assert missing_languages([], ["de"]) == {}


@pytest.mark.parametrize("scale", SCALES, ids=lambda scale: scale.key)
def test_every_shipped_language_has_every_text(scale):
    # `translated` falls back to English, so a gap would not show anywhere else.
    texts = {"label": scale.label, "instructions": scale.instructions, "credit": scale.credit}
    texts |= {item.key: item.text for item in scale.items}
    texts |= {f"option {option.code}": option.label for option in scale.options}
    assert "en" in scale.languages
    for name, text in texts.items():
        assert set(text) == set(scale.languages), name
        assert all(value.strip() for value in text.values()), name
    # Every translation names where it was published; English is the original.
    assert set(scale.translation_sources) == set(scale.languages) - {"en"}
    for language in scale.languages:
        attribution = scale.attribution(language)
        assert attribution["credit"] == scale.credit[language]
        assert attribution["licence_name"] and attribution["citation"]


def test_shipped_languages():
    assert SUS.languages == ("en", "de", "fr")
    assert SCS.languages == ("en",)
    assert TRUST.languages == ("en",)


def test_choices_follow_the_codes_in_the_study_language():
    assert SUS.choices("fr")[0] == (1, "Pas du tout d’accord")
    assert SUS.choices("de")[-1] == (5, "Stimme voll zu")
    assert TRUST.choices("en")[0] == (1, "Not at all")
    assert TRUST.choices("en")[-1] == (7, "Extremely")
