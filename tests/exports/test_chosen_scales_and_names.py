"""Each export format downloads under its own file name, and the companion scales a
study did not choose have no columns (docs/design/exports.md §7.1, §7.3)."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from exports.models import ExportJob
from scoring.instruments.companions import COMPANION_SCALES
from surveys.models import Study
from tests.exports.factories import populate_study
from tests.exports.readers import read_csv_tables, read_json, read_sav_tables, read_xlsx

SUS_COLUMNS = {*COMPANION_SCALES["sus"].item_keys, "sus_score"}
OTHER_SCALES = [scale for key, scale in COMPANION_SCALES.items() if key != "sus"]
OTHER_COLUMNS = {
    column for scale in OTHER_SCALES for column in (*scale.item_keys, f"{scale.key}_score")
}


def _file_name(response) -> str:
    return re.fullmatch(r'attachment; filename="(.+)"', response["Content-Disposition"])[1]


def test_the_csv_and_spss_table_archives_download_under_different_names(
    populated, run_export, client_for
):
    # Given both "every table" archives of the same study on the same day
    study = populated.study
    client = client_for("coordinator_a")

    # When the coordinator downloads both
    names = [
        _file_name(client.get(reverse("exports:job_download", args=[study.slug, job.token])))
        for job in (run_export(study, "csv-tables"), run_export(study, "sav-tables"))
    ]

    # Then the second does not overwrite the first, and each name says what it holds
    csv_name, sav_name = names
    assert csv_name != sav_name
    assert csv_name.endswith("-csv-tables.zip") and sav_name.endswith("-spss-tables.zip")


def test_every_format_has_a_file_name_of_its_own(study_a):
    made = timezone.now()
    jobs = [ExportJob(study=study_a, format=fmt, created_at=made) for fmt in ExportJob.Format]

    assert len({job.download_name for job in jobs}) == len(ExportJob.Format)


@pytest.fixture
def sus_only(personas, study_a):
    populate_study(study_a, sessions=3)
    Study.objects.filter(pk=study_a.pk).update(companion_scales=["sus"])
    study_a.refresh_from_db()
    return study_a


def test_a_sus_only_study_exports_the_sus_columns_and_none_of_the_others(sus_only, run_export):
    tables = read_csv_tables(run_export(sus_only, "csv-tables").absolute_path)

    header, _rows = tables["evaluations.csv"]
    assert SUS_COLUMNS <= set(header)
    assert not OTHER_COLUMNS & set(header)
    codebook = {row["variable"] for row in tables["codebook.csv"][1]}
    assert SUS_COLUMNS <= codebook and not OTHER_COLUMNS & codebook
    about = dict((row["field"], row["value"]) for row in tables["about.csv"][1])
    assert about["Companion scales"].startswith("System Usability Scale (SUS) given after")
    assert "Only the chosen scales have columns" in about["Companion scales"]
    assert "System Usability Scale (SUS): credit" in about
    for scale in OTHER_SCALES:
        assert not any(field.startswith(scale.label["en"]) for field in about)


def test_every_format_leaves_the_unchosen_scales_out(sus_only, run_export):
    workbook = read_xlsx(run_export(sus_only, "xlsx").absolute_path)
    document = read_json(run_export(sus_only, "json").absolute_path)
    frames = read_sav_tables(run_export(sus_only, "sav-tables").absolute_path)

    header = set(workbook["Evaluations"][0])
    assert SUS_COLUMNS <= header and not OTHER_COLUMNS & header
    row = document["tables"]["evaluations"][0]
    assert SUS_COLUMNS <= set(row) and not OTHER_COLUMNS & set(row)
    frame, _meta = frames["evaluations.sav"]
    assert SUS_COLUMNS <= set(frame.columns) and not OTHER_COLUMNS & set(frame.columns)


def test_a_study_without_companion_scales_has_no_companion_columns(personas, study_a, run_export):
    populate_study(study_a, sessions=2)

    tables = read_csv_tables(run_export(study_a, "csv-tables").absolute_path)

    header, rows = tables["evaluations.csv"]
    assert rows and not (SUS_COLUMNS | OTHER_COLUMNS) & set(header)
    about = dict((row["field"], row["value"]) for row in tables["about.csv"][1])
    assert about["Companion scales"] == "none given in this study (no companion scale columns)"
