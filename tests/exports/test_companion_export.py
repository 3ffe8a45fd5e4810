"""The companion scales in the exports (docs/design/exports.md §7.3,
docs/design/validation.md §14.1): each chosen scale's items and score in the Evaluations
table, empty where not submitted, described in the codebook and About, at no query more
per row. The scales a study did not choose: tests/exports/test_chosen_scales_and_names.py."""

from datetime import timedelta

import pytest
from django.utils import timezone

from exports.companion_columns import COMPANION_COLUMNS
from surveys.models import CompanionResponse, Evaluation, Study
from tests.exports.conftest import INJECTIONS
from tests.exports.factories import make_experimenters, populate_study
from tests.exports.readers import read_csv_tables, read_json, read_sav, read_xlsx, sheet_dicts
from tests.exports.test_queries import queries_of_export

SUS_KEYS = [f"sus{number}" for number in range(1, 11)]
SUS_COLUMNS = [*SUS_KEYS, "sus_score"]


def brooke_score(codes) -> float:
    """The SUS score worked out by hand, item by item (Brooke 1996, p. 194)."""
    total = 0
    for number, code in enumerate(codes, start=1):
        total += code - 1 if number % 2 else 5 - code
    return total * 2.5


def _give_sus(study, *, skip_every=3) -> dict[tuple[str, int], list]:
    """Submitted SUS answers for most of the study's submitted evaluations, a
    shown-but-unsubmitted one for every `skip_every`-th; (system, block) -> list
    of the answers expected in the export, as a list of ten codes and the score."""
    Study.objects.filter(pk=study.pk).update(companion_scales=["sus"])
    expected: dict[tuple[str, int], list] = {}
    rows = []
    evaluations = Evaluation.objects.submitted().filter(
        session__study=study, session__is_pilot=False
    )
    for number, evaluation in enumerate(evaluations.select_related("system").order_by("pk")):
        key = (evaluation.system.name, evaluation.block)
        if number % skip_every == 0:
            rows.append(CompanionResponse(evaluation=evaluation, scale="sus"))
            expected.setdefault(key, []).append(None)
            continue
        codes = [1 + (number + item) % 5 for item in range(10)]
        rows.append(
            CompanionResponse(
                evaluation=evaluation,
                scale="sus",
                answers=dict(zip(SUS_KEYS, codes, strict=True)),
                score=brooke_score(codes),
                submitted_at=timezone.now(),
            )
        )
        expected.setdefault(key, []).append((codes, brooke_score(codes)))
    CompanionResponse.objects.bulk_create(rows)
    return expected


def _as_exported(rows, number) -> dict[tuple[str, int], list]:
    exported: dict[tuple[str, int], list] = {}
    for row in rows:
        key = (row["system"], int(float(row["block"])))
        if row["sus_score"] in ("", None):
            assert all(row[column] in ("", None) for column in SUS_KEYS)
            exported.setdefault(key, []).append(None)
        else:
            codes = [number(row[column]) for column in SUS_KEYS]
            exported.setdefault(key, []).append((codes, float(row["sus_score"])))
    return exported


def _sorted(values: dict) -> dict:
    return {key: sorted(found, key=repr) for key, found in values.items()}


@pytest.fixture
def given(personas, study_a):
    populate_study(study_a, sessions=6, prompt_texts=INJECTIONS)
    study_a.refresh_from_db()
    return _give_sus(study_a)


def test_the_tables_carry_every_answer_and_score_and_leave_the_rest_empty(
    study_a, given, run_export
):
    job = run_export(study_a, "csv-tables")

    assert job.status == "succeeded", job.error_message
    tables = read_csv_tables(job.absolute_path)
    header, rows = tables["evaluations.csv"]
    flags_end = header.index("flag_too_few_turns") + 1
    assert header[flags_end : flags_end + 11] == SUS_COLUMNS
    assert _sorted(_as_exported(rows, int)) == _sorted(given)
    assert any(row["sus_score"] == "" for row in rows)  # shown, not submitted: empty
    codebook = {row["variable"]: row for row in tables["codebook.csv"][1]}
    first, second = codebook["sus1"], codebook["sus2"]
    assert first["label"] == (
        "System Usability Scale (SUS), item 1: "
        "I think that I would like to use this system frequently."
    )
    assert "(reversed)" in second["label"] and "(reversed)" not in first["label"]
    assert first["values"] == "1 = Strongly disagree; 2 = 2; 3 = 3; 4 = 4; 5 = Strongly agree"
    assert first["type"] == "integer" and codebook["sus_score"]["type"] == "number"
    assert "the sum times 2.5" in codebook["sus_score"]["label"]
    assert "items 2, 4, 6, 8, 10 reversed (6 − code)" in codebook["sus_score"]["label"]
    # The companion pages belong to their block's SHS step, and so does their time.
    for block in (1, 2):
        label = codebook[f"block{block}_shs_seconds"]["label"]
        assert label.startswith(f"Seconds spent in the step: block {block} SHS")
        assert "with the companion scales after it" in label
    about = dict((row["field"], row["value"]) for row in tables["about.csv"][1])
    assert about["Companion scales"].startswith("System Usability Scale (SUS) given after the SHS")
    assert "Digital Equipment Corporation" in about["System Usability Scale (SUS): credit"]
    assert (
        "https://doi.org/10.1201/9781498710411-35" in about["System Usability Scale (SUS): licence"]
    )
    assert about["System Usability Scale (SUS): cite as"].startswith("Brooke, J. (1996)")


def test_the_workbook_json_and_spss_hold_the_same_numbers(study_a, given, run_export):
    workbook = read_xlsx(run_export(study_a, "xlsx").absolute_path)
    document = read_json(run_export(study_a, "json").absolute_path)
    frame, meta = read_sav(run_export(study_a, "sav").absolute_path)

    rows = sheet_dicts(workbook["Evaluations"])
    assert _sorted(_as_exported(rows, lambda value: value)) == _sorted(given)
    assert all(isinstance(row["sus1"], int) for row in rows if row["sus1"] is not None)
    assert _sorted(_as_exported(document["tables"]["evaluations"], int)) == _sorted(given)
    assert "System Usability Scale (SUS): credit" in document["about"]
    assert set(SUS_COLUMNS) <= set(frame.columns)
    assert meta.variable_value_labels["sus1"][5.0] == "Strongly agree"
    assert meta.variable_measure["sus1"] == "ordinal"


def test_each_scales_labels_say_its_keying_and_range():
    labels = {column.key: column for column in COMPANION_COLUMNS}

    assert "(reversed)" in labels["trust1"].label
    assert labels["trust1"].values_text.startswith("1 = ")
    assert "items 1, 2, 3, 4, 5 reversed (8 − code)" in labels["trust_score"].label
    assert "; 1..7;" in labels["trust_score"].label
    assert "divided by 50" in labels["scs_score"].label
    assert "; 0.2..1;" in labels["scs_score"].label


def test_a_stored_text_never_reaches_a_cell(study_a, given, run_export):
    # Answers are checked before they are stored; one written around the
    # platform is left out rather than written where a spreadsheet reads it.
    response = CompanionResponse.objects.filter(submitted_at__isnull=False).first()
    response.answers = {**response.answers, "sus1": INJECTIONS[0], "sus2": True}
    response.save()

    job = run_export(study_a, "csv-tables")

    _header, rows = read_csv_tables(job.absolute_path)["evaluations.csv"]
    assert INJECTIONS[0] not in {row["sus1"] for row in rows}
    assert sum(1 for row in rows if row["sus_score"] and not row["sus1"]) == 1
    assert sum(1 for row in rows if row["sus_score"] and not row["sus2"]) == 1


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "json", "sav-tables"])
def test_the_query_count_does_not_grow_with_the_answers(personas, study_a, study_b, fmt):
    populate_study(study_a, sessions=5, seed=1)
    populate_study(study_b, sessions=50, seed=2, experimenters=make_experimenters(study_b, tag="b"))
    _give_sus(study_a)
    _give_sus(study_b)

    assert queries_of_export(study_a, fmt) == queries_of_export(study_b, fmt)


def test_an_answer_submitted_after_the_exports_moment_is_not_in_it(study_a, given, run_export):
    # A SUS page submitted while the export was being written (its moment already fixed).
    late = CompanionResponse.objects.filter(submitted_at__isnull=False).order_by("pk").first()
    late.submitted_at = timezone.now() + timedelta(hours=1)
    late.save()
    evaluation = late.evaluation
    key = (evaluation.system.name, evaluation.block)
    expected = {**given, key: list(given[key])}
    codes = [late.answers[item] for item in SUS_KEYS]
    expected[key].remove((codes, brooke_score(codes)))
    expected[key].append(None)

    job = run_export(study_a, "csv-tables")

    _header, rows = read_csv_tables(job.absolute_path)["evaluations.csv"]
    assert _sorted(_as_exported(rows, int)) == _sorted(expected)
