"""The replication package's R script, analysis/analysis.R: one readable file
put together from the setup, the sections whose figures the report holds,
and the comparison with the report (docs/design/exports.md §7.7)."""

import math
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from exports.replication.sections import RSection

R_FOLDER = Path(__file__).resolve().parent / "r"


def r_literal(value: Any) -> str:
    """`value` written as R code: numbers exactly, text quoted, lists as c() or list()."""
    if value is None:
        return "NA"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else "NA"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{escaped}"'
    if isinstance(value, Mapping):
        return "list(" + ", ".join(f"`{k}` = {r_literal(v)}" for k, v in value.items()) + ")"
    if isinstance(value, list | tuple):
        if all(not isinstance(v, list | tuple | Mapping) for v in value):
            return "c(" + ", ".join(r_literal(v) for v in value) + ")"
        return "list(" + ", ".join(r_literal(v) for v in value) + ")"
    raise TypeError(f"no R literal for {type(value).__name__}")


def _comment(text: str) -> str:
    return " ".join(str(text).split())


def _banner(title: str) -> str:
    rule = "# " + "-" * 75
    return f"{rule}\n# {title}\n{rule}\n"


def _header(report: Mapping[str, Any], platform_version: str, packages: list[str]) -> str:
    title = _comment(report.get("study", {}).get("title", ""))
    needed = ", ".join(f'"{name}"' for name in packages)
    return f"""# Replication script of the SHS study "{title}"
# Written by the SHS study platform {platform_version} with the report of {report.get("generated")}.
#
# It reads the anonymized data in data/, recomputes every figure of the study
# report (report/report.html; its numbers in report/report.json), writes them
# to analysis/r_results.json and prints each beside the report's. Run it from
# the package's folder:
#
#     Rscript analysis/analysis.R
#
# Each section below recomputes one part of the report and says where in the
# report its figures are. Change what you like: the comparison at the end says
# which figures then differ from the report's.

script_packages <- c({needed})
absent <- script_packages[!vapply(script_packages, requireNamespace, logical(1), quietly = TRUE)]
if (length(absent)) {{
  stop("This script needs the R package(s) ", paste(absent, collapse = ", "),
       ": install.packages(c(", paste0('"', absent, '"', collapse = ", "), "))", call. = FALSE)
}}
for (package in script_packages) {{
  suppressPackageStartupMessages(library(package, character.only = TRUE))
}}
"""


def _parameters(report: Mapping[str, Any], sections: Iterable[RSection]) -> str:
    lines: list[str] = []
    for section in sections:
        for name, (value, comment) in section.parameters(report).items():
            said = _comment(comment)
            lines.extend(f"# {line}" for line in textwrap.wrap(said[:1].upper() + said[1:], 76))
            lines.append(f"{name} <- {r_literal(value)}")
    if not lines:
        return ""
    return _banner("The study's settings the analysis follows") + "\n".join(lines) + "\n"


def analysis_script(
    report: Mapping[str, Any], sections: tuple[RSection, ...], platform_version: str
) -> str:
    packages = sorted({"jsonlite", *(name for s in sections for name in s.packages)})
    parts = [
        _header(report, platform_version, packages),
        _parameters(report, sections),
        (R_FOLDER / "setup.R").read_text(encoding="utf-8"),
    ]
    for section in sections:
        parts.append(section.script.read_text(encoding="utf-8"))
    parts.append((R_FOLDER / "compare.R").read_text(encoding="utf-8"))
    return "\n".join(part.rstrip("\n") + "\n" for part in parts if part)
