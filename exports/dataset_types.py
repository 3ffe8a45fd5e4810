"""What an export contains, as types: the dataset of one export, its tables
(one per sheet, rows read lazily) and how each session appears in it.
exports.dataset builds them; exports.tables and the record modules fill the
tables, and the writers read them."""

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, tzinfo

from django.utils import timezone

from exports import columns as cols
from surveys.models import Study

# One row of a sheet: its values by column key.
Record = dict[str, object]


@dataclass(frozen=True)
class SessionKey:
    """How one session appears in this export."""

    session_id: int
    participant_id: str
    administrator: str
    complete: int
    consent_version: str  # "" when no consent was recorded (a pilot without a text)


@dataclass
class Table:
    sheet: cols.Sheet
    columns: tuple[cols.Column, ...]
    count: int
    # Each row a mapping of every column's key to its value.
    rows: Callable[[], Iterator[Record]]

    @property
    def keys(self) -> list[str]:
        return [column.key for column in self.columns]


@dataclass
class ExportDataset:
    study: Study
    as_of: datetime
    include_pilot: bool
    include_free_text: bool
    sessions: dict[int, SessionKey]
    exclusions: dict[str, int]
    instrument_versions: list[str]
    # The secret of this export's session order (see anonymize.session_order_key).
    order_salt: str = ""
    # (language, consent version, sessions) of the sessions exported.
    consent_versions: list[tuple[str, str, int]] = field(default_factory=list)
    # Dates are calendar dates in the platform's time zone (settings.TIME_ZONE).
    timezone: tzinfo = field(default_factory=timezone.get_current_timezone)
    tables: dict[str, Table] = field(default_factory=dict)

    def table(self, key: str) -> Table:
        return self.tables[key]

    def present(self, keys: tuple[str, ...]) -> list[Table]:
        """The tables of `keys` this export has, in that order: a table that is
        free text as a whole (the transcripts) only when free text was asked for."""
        return [self.tables[key] for key in keys if key in self.tables]

    @property
    def administrators(self) -> int:
        return len({key.administrator for key in self.sessions.values()} - {""})
