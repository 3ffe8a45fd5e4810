"""Fixtures shared by the tests of shs_analyze's validation flags."""

import pytest

from tests.scoring.validation_files import study, write_csv


@pytest.fixture
def study_data():
    """Sixty participants' two evaluations with languages, an age band and the SUS."""
    return study()


@pytest.fixture
def validation_csv(tmp_path, study_data):
    return write_csv(tmp_path / "study.csv", study_data)
