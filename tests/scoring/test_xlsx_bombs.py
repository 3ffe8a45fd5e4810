"""A workbook that inflates far beyond its size (a zip bomb) is refused by the
answer-file readers of `shs_score` and `shs_analyze` on its declared sizes,
in well under a second, before openpyxl inflates any of it."""

import time

import pytest

from scoring.answers.files import AnswerFileError, read_answer_bytes, read_answer_file
from scoring.answers.xlsx_guard import UnsafeWorkbook, check_workbook
from tests.scoring.test_commands import run_failing
from tests.scoring.zip_bomb import workbook_bytes, zip_bomb


@pytest.fixture(scope="module")
def bomb_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("bomb") / "answers.xlsx"
    path.write_bytes(zip_bomb())
    return path


def test_the_bomb_is_small_and_a_real_workbook(bomb_path):
    assert bomb_path.stat().st_size < 1024 * 1024  # passes every upload limit


def test_reading_the_bomb_is_refused_at_once(bomb_path):
    started = time.perf_counter()
    with pytest.raises(AnswerFileError) as refused:
        read_answer_file(bomb_path)

    assert time.perf_counter() - started < 1
    assert "answers.xlsx is compressed" in str(refused.value)
    assert "refused unread" in str(refused.value)


@pytest.mark.parametrize("command", ["shs_score", "shs_analyze"])
def test_the_commands_refuse_the_bomb_at_once(bomb_path, tmp_path, command):
    started = time.perf_counter()
    message, _ = run_failing(command, bomb_path, "-o", tmp_path / "out")

    assert time.perf_counter() - started < 1
    assert "refused unread" in message


def test_a_file_that_only_looks_like_a_zip_is_refused():
    with pytest.raises(AnswerFileError, match="not a readable zip file"):
        read_answer_bytes(b"PK\x03\x04" + b"\x00" * 200, name="fake.xlsx")


def test_the_total_inflated_size_is_bounded_too():
    data = workbook_bytes(rows=[(2, -2, 1, -1, 0, 0, 2, -2, 1, -1)] * 20_000)
    with pytest.raises(UnsafeWorkbook, match="more than 1 MB"):
        check_workbook(data, "a.xlsx", max_uncompressed=1024 * 1024)


def test_an_ordinary_workbook_passes():
    check_workbook(workbook_bytes(rows=[(2, -2, 1, -1, 0, 0, 2, -2, 1, -1)] * 5000), "a.xlsx")
    table = read_answer_bytes(workbook_bytes(), name="a.xlsx")
    assert len(table) == 1
