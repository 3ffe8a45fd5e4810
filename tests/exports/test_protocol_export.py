"""The protocol variant in every format (docs/design/remote.md §11.5): each evaluation's
recorded protocol in the Evaluations table, each session's mode in Sessions,
both in the codebook; the too-few-turns flag of a naturalistic evaluation is
held to the study's turn minimum. Compared with tests/exports/expected.py."""

import pytest

from surveys.models import Evaluation, InteractionBlock, Study
from tests.exports.readers import read_xlsx, sheet_dicts
from tests.exports.test_formats import assert_matches_database
from tests.exports.test_quality_flags import _rows, _transcript


@pytest.fixture
def mixed(populated):
    """Study A, now naturalistic (6 turns would be too many: 4 are asked), with
    the two blocks of its first complete session rated under that protocol:
    one block 3 user turns (too few), the other 4 (enough), while the two
    category minimums add up to 6 (both would be too few)."""
    study = populated.study
    Study.objects.filter(pk=study.pk).update(protocol="naturalistic", min_turns=4)
    study.refresh_from_db()
    session = min(populated.complete_sessions, key=lambda s: s.pk)
    Evaluation.objects.filter(session=session).update(protocol="naturalistic")
    _transcript(InteractionBlock.objects.get(session=session, block=1), user_turns=3)
    _transcript(InteractionBlock.objects.get(session=session, block=2), user_turns=4)
    return study


@pytest.mark.parametrize("fmt", ["csv", "json", "xlsx"])
def test_every_format_carries_each_evaluations_protocol(mixed, run_export, fmt):
    job = run_export(mixed, fmt)

    rows = _rows(job, fmt)
    assert_matches_database(rows, mixed)  # protocol and flags, row by row
    natural = [row for row in rows if row["protocol"] == "naturalistic"]
    assert len(natural) == 2
    assert sorted(int(row["flag_too_few_turns"]) for row in natural) == [0, 1]
    assert {row["protocol"] for row in rows} == {"naturalistic", "two_category"}


def test_sessions_carry_their_mode_and_the_codebook_explains_both(mixed, run_export):
    sheets = read_xlsx(run_export(mixed, "xlsx").absolute_path)

    assert {row["mode"] for row in sheet_dicts(sheets["Sessions"])} == {"supervised"}
    codebook = {(r["sheet"], r["variable"]): r for r in sheet_dicts(sheets["Codebook"])}
    assert "naturalistic" in codebook[("Evaluations", "protocol")]["values"]
    assert "remote" in codebook[("Sessions", "mode")]["values"]
    about = {r["field"]: r["value"] for r in sheet_dicts(sheets["About"])}
    assert about["Protocol"].startswith("naturalistic")


def test_the_report_states_the_naturalistic_protocol(mixed, run_export):
    html = run_export(mixed, "report-html").absolute_path.read_text(encoding="utf-8")

    assert "Naturalistic protocol: at least 4 messages and 10 minutes per block" in html
    assert "Verified Knowledge, 3 Glatteis prompts" not in html
