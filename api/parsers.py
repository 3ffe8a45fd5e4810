"""JSON bodies, refused whole before they cost memory.

REST framework's JSON parser reads the whole body, whatever Django's
DATA_UPLOAD_MAX_MEMORY_SIZE says (that limit guards `request.body` and form
parsing, not the stream a parser reads). The largest body an endpoint takes
is a transcript: MAX_CHARACTERS of text, up to four bytes each in UTF-8, as
the page's upload takes it, plus room for the other fields.
"""

import io

from django.utils.translation import gettext as _
from rest_framework.parsers import JSONParser

from api.problems import Refused
from surveys.transcript_import import MAX_CHARACTERS

MAX_JSON_BYTES = 4 * MAX_CHARACTERS + 64 * 1024


class CappedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        if declared and declared.isdigit() and int(declared) > MAX_JSON_BYTES:
            raise _too_large()
        # A body sent without its length (chunked) is read to one byte past the limit.
        body = stream.read(MAX_JSON_BYTES + 1)
        if len(body) > MAX_JSON_BYTES:
            raise _too_large()
        return super().parse(io.BytesIO(body), media_type, parser_context)


def _too_large() -> Refused:
    return Refused(
        _("The request is larger than %(limit)d MB; nothing was stored.")
        % {"limit": MAX_JSON_BYTES // 1_000_000},
        status_code=413,
    )
