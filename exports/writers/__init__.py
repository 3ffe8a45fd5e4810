"""One writer per export format. Each takes an ExportDataset, a path and a
Progress, and names the tables whose rows it writes (for the progress bar);
what they share is in exports.writers.base.

The folder of the path belongs to the run alone (exports.runner): a writer
keeps its working files there, never in the system's temporary folder, so
that what a killed run leaves behind is found and removed."""

from exports.writers import csvfile, jsonfile, jsonlines, spss, workbook
from exports.writers.base import Writer

WRITERS = {
    "csv": csvfile.WRITER,
    "csv-tables": csvfile.TABLES_WRITER,
    "xlsx": workbook.WRITER,
    "json": jsonfile.WRITER,
    "jsonl": jsonlines.WRITER,
    "sav": spss.WRITER,
    "sav-tables": spss.TABLES_WRITER,
}


def writer_for(fmt: str) -> Writer:
    return WRITERS[fmt]
