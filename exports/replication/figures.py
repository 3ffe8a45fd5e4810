"""The report's figures an R script recomputes, flattened to dotted paths
(report/figures.json of the replication package)."""

from collections.abc import Iterable, Iterator, Mapping
from fnmatch import fnmatchcase
from typing import Any

from exports.replication.sections import RULES, RSection


def leaves(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every number or null of the report's JSON, with its dotted path (list
    elements are numbered from 0)."""
    if isinstance(data, Mapping):
        items: Iterable[tuple[Any, Any]] = data.items()
    elif isinstance(data, list | tuple):
        items = enumerate(data)
    else:
        if data is None or (isinstance(data, int | float) and not isinstance(data, bool)):
            yield prefix, data
        return
    for key, value in items:
        yield from leaves(value, f"{prefix}.{key}" if prefix else str(key))


def _matches(path: str, pattern: str) -> bool:
    # "*" stands for exactly one key of the path, never for a dot.
    parts, wanted = path.split("."), pattern.split(".")
    return len(parts) == len(wanted) and all(
        fnmatchcase(part, want) for part, want in zip(parts, wanted, strict=True)
    )


def recomputed_figures(report: Mapping[str, Any], sections: Iterable[RSection]) -> dict:
    """{"rules": tolerance by rule, "figures": {path: {"value", "rule", "section"}}}."""
    figures: dict[str, dict] = {}
    every_leaf = list(leaves(report))
    for section in sections:
        for pattern, rule in section.figures:
            if rule not in RULES:
                raise ValueError(f"{section.key}: unknown rule {rule!r} for {pattern}")
            for path, value in every_leaf:
                if path not in figures and _matches(path, pattern):
                    figures[path] = {"value": value, "rule": rule, "section": section.key}
    return {"rules": RULES, "figures": figures}
