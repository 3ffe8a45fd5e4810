"""The replication package (docs/design/exports.md §7.7): the study's
anonymized data, its pre-registration, its report and an R script that
recomputes every figure of the report from the data, in one ZIP file with a
README and the SHA-256 of every file.

The data and the report are computed at one moment, so that the script
recomputes the report from exactly the rows it was computed from. Pilot
sessions are left out, as the report leaves them out.
"""

import hashlib
import json
import zipfile
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone

from exports.dataset import build_dataset
from exports.dataset_types import ExportDataset
from exports.progress import Progress
from exports.replication.figures import recomputed_figures
from exports.replication.script import analysis_script
from exports.replication.sections import RULES, applying_sections, file_makers, filtered_report
from exports.report.build import build_report, render_report_file
from exports.report.sections import report_sections
from exports.writers import csvfile, spss
from surveys.models import Study

# The R and the packages the script was checked with: the versions Debian 12
# ships, which CI installs and runs the script with (tests/replication).
CHECKED_WITH = {
    "R": "4.2.2",
    "jsonlite": "1.8.4",
    "lavaan": "0.6.14",
    "nlme": "3.1.162",
    "psych": "2.2.9",
    "sandwich": "3.0.2",
}
MANIFEST = "MANIFEST.sha256"


def platform_version() -> str:
    return metadata.version("shs-platform")


def write_replication(
    *, study: Study, path: Path, progress: Progress, include_free_text: bool, language: str
) -> None:
    """Write the package to `path`."""
    as_of = timezone.now()
    dataset = build_dataset(
        study=study, include_pilot=False, include_free_text=include_free_text, as_of=as_of
    )
    with_spss = spss.spss_available()
    rows = csvfile.TABLES_WRITER.total_rows(dataset)
    if with_spss:
        rows += spss.TABLES_WRITER.total_rows(dataset)
    progress.expect(2 + sum(section.progress_steps for section in report_sections()) + rows)
    report = filtered_report(study, build_report(study, progress, language, as_of))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        csvfile.write_tables_into(archive, dataset, progress, "Replication package (ZIP)", "data/")
        if with_spss:
            spss.write_sav_tables_into(archive, dataset, progress, path.parent, "data/spss/")
        for name, text in _texts(study, dataset, report, language, with_spss).items():
            archive.writestr(name, text.encode("utf-8"))
    _add_manifest(path)


def _texts(
    study: Study, dataset: ExportDataset, report: dict, language: str, with_spss: bool
) -> dict[str, str]:
    figures_free = {key: value for key, value in report.items() if key != "figures"}
    sections = applying_sections(figures_free)
    texts: dict[str, str] = {}
    for section in sections:
        if section.data_files is not None:
            made = section.data_files(study, dataset, report)
            texts.update({f"data/{name}": text for name, text in made.items()})
    for maker in file_makers():
        texts.update(maker(study, dataset, report))
    texts["report/report.html"] = render_report_file(report, language)
    texts["report/report.json"] = _json(figures_free)
    texts["report/figures.json"] = _json(recomputed_figures(figures_free, sections))
    texts["analysis/analysis.R"] = analysis_script(figures_free, sections, platform_version())
    tables = [f"{table.sheet.key}.csv" for table in dataset.present(csvfile.TABLES)]
    texts["README.md"] = _readme(study, report, sections, texts, tables, with_spss, dataset.as_of)
    return texts


def _json(data: Any) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def _readme(study, report, sections, texts, tables, with_spss: bool, as_of: datetime) -> str:
    packages = sorted({"jsonlite", *(name for s in sections for name in s.packages)})
    return render_to_string(
        "exports/replication/README.md",
        {
            "title": " ".join(study.title.split()),
            # Written out here: the job may run in German or French, and the
            # README, like the script, is in English with English numbers.
            "as_of": as_of.astimezone(UTC).strftime("%Y-%m-%d %H:%M"),
            "platform_version": platform_version(),
            "report": report,
            "sections": sections,
            "r_version": CHECKED_WITH["R"],
            "packages": [(name, CHECKED_WITH.get(name, "")) for name in packages],
            "with_spss": with_spss,
            "preregistration": any(name.startswith("preregistration/") for name in texts),
            "tables": tables,
            "data_files": sorted(
                name.removeprefix("data/") for name in texts if name.startswith("data/")
            ),
            "rules": {rule: f"{tolerance:g}" for rule, tolerance in RULES.items()},
        },
    )


def _add_manifest(path: Path) -> None:
    """MANIFEST.sha256: every file's SHA-256, in the format `sha256sum -c` checks."""
    lines = []
    with zipfile.ZipFile(path) as archive:
        for member in sorted(archive.namelist()):
            digest = hashlib.sha256()
            with archive.open(member) as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
            lines.append(f"{digest.hexdigest()}  {member}\n")
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MANIFEST, "".join(lines))
