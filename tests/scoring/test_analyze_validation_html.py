"""shs_analyze --validation --html (docs/design/command-line.md §9.3): the HTML report
carries the validation section the study report shows (templates/validation/),
with each part's heading, its figures and the retest's Bland-Altman plot."""

import re

from scoring.web.numbers import fixed
from tests.scoring.validation_files import FAST, analyze, report, retest_rows, write_retest


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_the_html_has_the_validation_section_of_the_json(validation_csv, study_data, tmp_path):
    retest = write_retest(tmp_path / "retest.csv", retest_rows(study_data, 40, shift=1))
    output, page = tmp_path / "report.json", tmp_path / "report.html"

    analyze(validation_csv, "-o", output, "--html", page, "--validation", "--retest", retest, *FAST)

    validation = report(output)["validation"]
    html = page.read_text(encoding="utf-8")
    assert '<h2 id="validation">Validation programme (paper section 8.3)</h2>' in html
    assert f"{validation['n']} evaluations by {validation['participants']} participants" in _text(
        html
    )
    # Every part the file supports, each under its own heading.
    for part in ("cfa", "invariance", "convergent", "retest", "nested"):
        assert part in validation
        assert f'id="validation-{part}"' in html
    icc = validation["retest"]["scores"]["shs"]["icc2_1"]["value"]
    assert fixed(icc) in html
    assert "<svg" in html and "Bland-Altman plot of the SHS" in html


def test_without_a_validation_flag_the_html_has_no_validation_section(validation_csv, tmp_path):
    page = tmp_path / "report.html"

    analyze(validation_csv, "-o", tmp_path / "report.json", "--html", page)

    assert 'id="validation"' not in page.read_text(encoding="utf-8")
