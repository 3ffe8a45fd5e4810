"""Every export says which consent version each participant agreed to:
the Sessions and Evaluations tables (so CSV, XLSX, JSON and SPSS), the About
sheet and the codebook; by the anonymous participant_id, never the code."""

import pytest

from surveys.consent import consent_text_revise
from surveys.models import ConsentText
from tests.exports.expected import included_sessions
from tests.exports.readers import read_csv, read_json, read_sav, read_xlsx, sheet_dicts
from tests.surveys.runner import SessionRun


@pytest.fixture
def revised(populated, client_for):
    """Study A's German text revised after consents (1.0 -> 1.1), and one more
    German participant who agreed to 1.1."""
    study = populated.study
    old = ConsentText.current(study.pk, "de")
    consent_text_revise(
        study=study, language="de", information_sheet="Neu", consent_text="Ich willige ein."
    )
    run = SessionRun(client_for("experimenter_a"), study, language="de")
    run.complete()
    assert old.version == "1.0" and run.session.consent.version == "1.1"
    return study


def _expected_versions(study) -> list[str]:
    """Consent versions of the included sessions, sorted: exports list sessions
    in an order of their own (random per export), so only the multiset compares."""
    return sorted(session.consent.version for session in included_sessions(study))


def test_the_sessions_sheet_shows_who_agreed_to_which_version(revised, run_export):
    sheets = read_xlsx(run_export(revised, "xlsx").absolute_path)

    sessions = sheet_dicts(sheets["Sessions"])
    assert sorted(row["consent_version"] for row in sessions) == _expected_versions(revised)
    assert {row["consent_version"] for row in sessions} == {"1.0", "1.1"}
    # Evaluations carry the version of their participant's session too.
    version_of = {row["participant_id"]: row["consent_version"] for row in sessions}
    for row in sheet_dicts(sheets["Evaluations"]):
        assert row["consent_version"] == version_of[row["participant_id"]]

    codebook = {(row["sheet"], row["variable"]) for row in sheet_dicts(sheets["Codebook"])}
    assert ("Sessions", "consent_version") in codebook
    assert ("Evaluations", "consent_version") in codebook

    about = {row["field"]: row["value"] for row in sheet_dicts(sheets["About"])}
    assert "German 1.0: " in about["Consent versions"]
    assert "German 1.1: 1 session" in about["Consent versions"]


def test_json_and_csv_carry_the_consent_version(revised, run_export):
    document = read_json(run_export(revised, "json").absolute_path)
    sessions = document["tables"]["sessions"]
    assert sorted(row["consent_version"] for row in sessions) == _expected_versions(revised)
    assert "German 1.1: 1 session" in document["about"]["Consent versions"]

    header, rows = read_csv(run_export(revised, "csv").absolute_path)
    assert "consent_version" in header
    assert {row["consent_version"] for row in rows} == {"1.0", "1.1"}


def test_spss_carries_the_consent_version(revised, run_export):
    pytest.importorskip("pyreadstat")
    frame, meta = read_sav(run_export(revised, "sav").absolute_path)
    assert set(frame["consent_version"]) == {"1.0", "1.1"}
    assert meta.column_names_to_labels["consent_version"].startswith("Version of the information")
    assert any("Consent versions" in line for line in meta.notes)
