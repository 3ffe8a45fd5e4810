"""One writer per export format. Each takes an ExportDataset, a path and a
Progress, and names the tables whose rows it writes (for the progress bar).

The folder of the path belongs to the run alone (exports.runner): a writer
keeps its working files there, never in the system's temporary folder, so
that what a killed run leaves behind is found and removed."""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from exports.dataset import ExportDataset
from exports.progress import Progress


@dataclass(frozen=True)
class Writer:
    write: Callable[[ExportDataset, Path, Progress], None]
    tables: tuple[str, ...]

    def total_rows(self, dataset: ExportDataset) -> int:
        return sum(dataset.table(key).count for key in self.tables)


def writer_for(fmt: str) -> Writer:
    from exports.writers import csvfile, jsonfile, spss, workbook

    writers = {
        "csv": csvfile.WRITER,
        "csv-tables": csvfile.TABLES_WRITER,
        "xlsx": workbook.WRITER,
        "json": jsonfile.WRITER,
        "sav": spss.WRITER,
        "sav-tables": spss.TABLES_WRITER,
    }
    return writers[fmt]
