"""What a column and a sheet of an export are (the lists of them are in
exports.columns, which every other module imports them from)."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass

INTEGER, NUMBER, TEXT, DATE = "integer", "number", "text", "date"


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    kind: str = INTEGER
    values: tuple[tuple[object, str], ...] = ()
    # Free-text columns are exported only when the coordinator asks for them.
    free_text: bool = False
    # The codes run from one end of a scale to the other (SPSS measure level
    # "ordinal"); other coded columns are nominal, plain numbers scale.
    ordinal: bool = False
    # How the column's value is worked out from the row's other values (by
    # column key), for a value the dataset does not read itself: with it, a new
    # column is this one definition (exports.dataset.rows_by_column).
    value_of: Callable[[Mapping[str, object]], object] | None = None

    @property
    def values_text(self) -> str:
        return "; ".join(f"{code} = {label}" for code, label in self.values)


@dataclass(frozen=True)
class Sheet:
    key: str  # JSON key and SPSS dataset name
    title: str  # XLSX sheet name
    description: str
    columns: tuple[Column, ...]

    def active_columns(self, include_free_text: bool) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if include_free_text or not c.free_text)
