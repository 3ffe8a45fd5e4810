"""A real XLSX zip bomb for the readers' tests: a valid workbook whose
sharedStrings.xml holds 200 MB of short strings, which deflates to a few
hundred kilobytes (openpyxl would inflate and parse all of it)."""

import io
import zipfile

import openpyxl

from scoring.instruments.shs import ITEM_KEYS

INFLATED_BYTES = 200 * 1024 * 1024
# Many short strings, not one long one: openpyxl makes an object of each.
_CHUNK = b"<si><t>A</t></si>" * 65536


def workbook_bytes(header=ITEM_KEYS, rows=((1,) * 10,)) -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    sheet.append(list(header))
    for row in rows:
        sheet.append(list(row))
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


_MAIN = b"http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_STRINGS_TYPE = b"application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"
_STRINGS_REL = b"http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings"


def zip_bomb(header=ITEM_KEYS, rows=((1,) * 10,), inflated: int = INFLATED_BYTES) -> bytes:
    """`workbook_bytes` with a shared strings part of `inflated` bytes of short strings,
    registered as Excel registers it (openpyxl reads it whole when it opens the file)."""
    source = zipfile.ZipFile(io.BytesIO(workbook_bytes(header, rows)))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as bomb:
        for member in source.infolist():
            content = source.read(member)
            if member.filename == "[Content_Types].xml":
                override = b'<Override PartName="/xl/sharedStrings.xml" ContentType="%s"/>'
                content = content.replace(b"</Types>", override % _STRINGS_TYPE + b"</Types>")
            elif member.filename == "xl/_rels/workbook.xml.rels":
                relation = b'<Relationship Type="%s" Target="sharedStrings.xml" Id="rId99"/>'
                content = content.replace(
                    b"</Relationships>", relation % _STRINGS_REL + b"</Relationships>"
                )
            bomb.writestr(member.filename, content)
        with bomb.open("xl/sharedStrings.xml", "w") as part:
            part.write(b'<sst xmlns="%s">' % _MAIN)
            for _ in range(inflated // len(_CHUNK)):
                part.write(_CHUNK)
            part.write(b"</sst>")
    return buffer.getvalue()
