"""Reading a pasted or uploaded transcript of an external system (docs/design/transcripts.md §10.4).

A pure parser: text in, turns out, no database. Either the whole text
parses or `TranscriptError` says which line is wrong and why; nothing
partial is ever returned, so nothing partial is ever stored.

Three formats (`Transcript.Format`):

- `text`: each turn starts with a line `Role: text…` (the text may also
  start on the next line) and runs to the next such line. The role names,
  in any case, with an optional "said" as the web interfaces copy it
  ("You said:", "Vous avez dit :", "ChatGPT hat gesagt:"), are `ROLE_NAMES`.
- `markdown`: as `text`, and a turn may also start with a heading
  (`## User`, `### Assistant:`) or a bold label (`**User:**`, `**User**:`,
  `__User:__`), with or without text after it. Headings, blank lines and
  rules (`---`) before the first turn are the document's title, and a rule
  ending a turn is the exporter's separator; both are dropped.
- `json`: a list of `{"role": …, "content": …}`; role `user`, `assistant`,
  `system` (or `developer`, the newer name for it); content a string or a
  list of text parts (strings or `{"type": "text", "text": …}`), joined by
  blank lines. Other keys are ignored.

In `text` and `markdown`, role lines inside a code fence (```) are text,
and a label that is not a role name ("Note:", "### Summary") is text too,
unless it misspells one (`_near_miss`: "Asistant:", "Usr:"), which is
refused as a typo with the accepted names: taken for text, it would silently
fold a participant's question into the answer before it.
"""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

FORMATS = ("text", "markdown", "json")
# A fifteen-minute block is a few thousand words; this is a hundred times that.
MAX_CHARACTERS = 500_000
MAX_TURNS = 2_000

# Role names as people paste them: English, German, French, and the names of
# the consumer interfaces the paper's design uses.
ROLE_NAMES = {
    "user": (
        "user", "you", "human", "me",
        "nutzer", "nutzerin", "benutzer", "benutzerin", "du", "ich",
        "utilisateur", "utilisatrice", "vous", "moi",
    ),
    "assistant": (
        "assistant", "ai", "bot", "chatgpt", "claude", "gemini", "copilot", "le chat",
        "assistent", "assistentin", "ki",
        "assistante", "ia",
    ),
    "system": (
        "system", "system prompt", "systemprompt", "system-prompt",
        "système", "systeme", "invite système", "prompt système",
    ),
}  # fmt: skip
_ROLE_OF_NAME = {name: role for role, names in ROLE_NAMES.items() for name in names}
_SAID = re.compile(r"\s+(said|a dit|avez dit|as dit|hat gesagt|hast gesagt|sagte)$")
JSON_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}

_LABEL = r"[^\W\d_][\w'’ -]{0,30}?"
_PLAIN = re.compile(rf"^\s*(?P<label>{_LABEL})\s*:\s*(?P<rest>.*)$")
_HEADING = re.compile(rf"^\s*#{{1,6}}\s+(?P<label>{_LABEL})\s*:?\s*#*\s*$")
_BOLD = re.compile(
    rf"^\s*(?P<d>\*\*|__)(?P<label>{_LABEL})\s*(:\s*(?P=d)|(?P=d)\s*:)\s*(?P<rest>.*)$"
    rf"|^\s*(?P<d2>\*\*|__)(?P<label2>{_LABEL})\s*(?P=d2)\s*$"
)
_TITLE = re.compile(r"^\s*#{1,6}\s")
_RULE = re.compile(r"^\s*([-*_])(\s*\1){2,}\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


_NOT_UTF8 = gettext_lazy("the file is not UTF-8 text; save it as UTF-8 and upload it again.")
# Half of a UTF-16 surrogate pair: a JSON escape can write one, no text can store it.
_SURROGATE = re.compile("[\ud800-\udfff]")


class TranscriptError(ValueError):
    """The transcript cannot be read; `line` is 1-based, None for the whole text."""

    def __init__(self, message: str, line: int | None = None):
        self.line = line
        super().__init__(
            _("Line %(line)d: %(message)s") % {"line": line, "message": message}
            if line
            else message
        )


@dataclass(frozen=True)
class ParsedTurn:
    role: str  # "user", "assistant" or "system" (Turn.Role)
    text: str
    line: int  # where the turn starts in the pasted text


def decode_upload(data: bytes) -> str:
    """An uploaded file's text: UTF-8 (with or without a byte-order mark), or
    UTF-16 with its byte-order mark (Windows editors save "Unicode" so)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise TranscriptError(_NOT_UTF8) from None
    if b"\x00" in data:
        # UTF-16 without its mark reads as UTF-8 with a NUL after every letter.
        raise TranscriptError(_NOT_UTF8, data.count(b"\n", 0, data.index(b"\x00")) + 1)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise TranscriptError(_NOT_UTF8, line) from None


def parse_transcript(text: str, fmt: str) -> list[ParsedTurn]:
    """The turns of a transcript, in order; raises TranscriptError on anything wrong."""
    if fmt not in FORMATS:
        raise TranscriptError(_("Unknown transcript format “%(format)s”.") % {"format": fmt})
    text = text.removeprefix("\ufeff")
    if len(text) > MAX_CHARACTERS:
        raise TranscriptError(
            _("The transcript is longer than %(limit)d characters; nothing was stored.")
            % {"limit": MAX_CHARACTERS}
        )
    if "\x00" in text:
        raise TranscriptError(
            _("the text contains a NUL byte."), _line_at(text, text.index("\x00"))
        )
    if not text.strip():
        raise TranscriptError(_("The transcript is empty."))
    turns = _parse_json(text) if fmt == "json" else _parse_lines(text, fmt == "markdown")
    if len(turns) > MAX_TURNS:
        raise TranscriptError(
            _("The transcript has more than %(limit)d turns.") % {"limit": MAX_TURNS}
        )
    if not any(turn.role == "user" for turn in turns):
        raise TranscriptError(
            _("The transcript has no user turn: no line starts with a user's role name.")
        )
    return turns


def _line_at(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


# -- text and Markdown -----------------------------------------------------------------


def _role_of(label: str) -> str | None:
    name = _SAID.sub("", " ".join(label.lower().split()))
    return _ROLE_OF_NAME.get(name)


def _marker(line: str, markdown: bool) -> tuple[str, str] | None:
    """(label, text after it) when the line has the shape of a turn's first line."""
    shapes = (_BOLD, _HEADING, _PLAIN) if markdown else (_PLAIN,)
    for shape in shapes:
        match = shape.match(line)
        if match:
            groups = match.groupdict()
            label = groups.get("label") or groups.get("label2")
            return label, groups.get("rest") or ""
    return None


# What a typo is, weighed against the words that open a line of an answer
# ("Note:", "Both:", "Users:", "Nous :"): one letter added, dropped, changed or
# two swapped, the first letter kept ("Nous" is no typo of "Vous"), of a name
# of four letters or more (AI, KI, Me, Du, Ich, Bot, You are one letter from
# too many words: "Hi", "Both", "Your"), and not an inflection of the name.
_TYPO_OF = tuple(name for name in _ROLE_OF_NAME if len(name) >= 4)
_INFLECTIONS = ("s", "n", "en", "nen")  # Users, Nutzern, Assistenten, Nutzerinnen
# Words of English, German or French that the rule above takes for a typo,
# and that open a line of an answer ("Use: pip install …", "Nutzen: …").
_WORDS_NEAR_A_NAME = frozenset(
    ("use", "uses", "used", "usher", "assistance", "assistenz", "clause", "nutzen", "benutzen")
)


def _near_miss(label: str) -> str | None:
    """The role name a label misspells ("Asistant:", "Usr:", "Uesr:", "Nutzr:")."""
    name = _SAID.sub("", " ".join(label.lower().split()))
    if name in _WORDS_NEAR_A_NAME:
        return None
    if any(name == known + ending for known in _TYPO_OF for ending in _INFLECTIONS):
        return None
    for known in _TYPO_OF:
        if name[:1] == known[:1] and _one_typo_apart(name, known):
            return known
    return None


def _one_typo_apart(a: str, b: str) -> bool:
    """One letter added, dropped or changed, or two neighbours swapped ("Uesr")."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) != len(b):
        longer, shorter = (a, b) if len(a) > len(b) else (b, a)
        return any(longer[:i] + longer[i + 1 :] == shorter for i in range(len(longer)))
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    if len(differ) == 1:
        return True
    first, *rest = differ
    return rest == [first + 1] and (a[first], a[first + 1]) == (b[first + 1], b[first])


def _parse_lines(text: str, markdown: bool) -> list[ParsedTurn]:
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    turns: list[tuple[str, int, list[str]]] = []
    in_fence = False
    for number, line in enumerate(lines, start=1):
        marker = None if in_fence else _marker(line, markdown)
        if _FENCE.match(line):
            in_fence = not in_fence
        role = marker and _role_of(marker[0])
        typo = marker and not role and _near_miss(marker[0])
        if typo:
            raise TranscriptError(
                _(
                    "unknown role “%(label)s” (did you mean “%(name)s”?). The role names, "
                    "in any letter case: %(names)s."
                )
                % {"label": marker[0].strip(), "name": typo, "names": ", ".join(_ROLE_OF_NAME)},
                number,
            )
        if role:
            turns.append((role, number, [marker[1]]))
        elif turns:
            turns[-1][2].append(line)
        elif line.strip() and not (markdown and (_TITLE.match(line) or _RULE.match(line))):
            raise TranscriptError(_not_a_role_message(marker), number)
    return [_finished_turn(role, number, body, markdown) for role, number, body in turns]


def _not_a_role_message(marker) -> str:
    if marker:
        return _("unknown role “%(label)s”; a transcript starts with a role such as “User:”.") % {
            "label": marker[0].strip()
        }
    return _("text before the first turn; a transcript starts with a role such as “User:”.")


def _finished_turn(role: str, number: int, body: list[str], markdown: bool) -> ParsedTurn:
    while body and not body[-1].strip():
        body.pop()
    if markdown and body and len(body) > 1 and _RULE.match(body[-1]):
        body.pop()  # the exporter's separator between turns
    text = "\n".join(part.rstrip() for part in body).strip("\n").strip()
    if not text:
        raise TranscriptError(_("the turn is empty."), number)
    return ParsedTurn(role=role, text=text, line=number)


# -- JSON ----------------------------------------------------------------------------


def _parse_json(text: str) -> list[ParsedTurn]:
    try:
        # Numbers as floats: Python refuses integers of more than 4,300 digits.
        data = json.loads(text, parse_int=float)
        lines = _element_lines(text) if isinstance(data, list) else []
    except json.JSONDecodeError as error:
        raise TranscriptError(
            _("invalid JSON at column %(column)d: %(problem)s.")
            % {"column": error.colno, "problem": error.msg},
            error.lineno,
        ) from None
    except RecursionError:
        raise TranscriptError(_("The JSON is nested too deeply to be a transcript.")) from None
    if not isinstance(data, list):
        raise TranscriptError(
            _("the JSON must be a list of {role, content} objects."),
            _line_at(text, len(text) - len(text.lstrip())),
        )
    return [
        _json_turn(item, number, line)
        for number, (item, line) in enumerate(zip(data, lines, strict=True), 1)
    ]


def _element_lines(text: str) -> list[int]:
    """The line each element of the (valid) top-level list starts on."""
    decoder = json.JSONDecoder(parse_int=float)
    whitespace = re.compile(r"[\s,]*")
    index = whitespace.match(text, text.index("[") + 1).end()
    lines = []
    while text[index] != "]":
        lines.append(_line_at(text, index))
        _, index = decoder.raw_decode(text, index)
        index = whitespace.match(text, index).end()
    return lines


def _json_turn(item, number: int, line: int) -> ParsedTurn:
    where = {"number": number}
    if not isinstance(item, dict):
        raise TranscriptError(
            _("turn %(number)d is not an object with “role” and “content”.") % where, line
        )
    role = item.get("role")
    if not isinstance(role, str) or role.strip().lower() not in JSON_ROLES:
        raise TranscriptError(
            _("turn %(number)d has an unknown role %(role)s; use user, assistant or system.")
            % {**where, "role": json.dumps(role, ensure_ascii=False)},
            line,
        )
    text = _json_content(item.get("content"), where, line).strip()
    if not text:
        raise TranscriptError(_("turn %(number)d is empty.") % where, line)
    if "\x00" in text:
        raise TranscriptError(_("turn %(number)d contains a NUL character.") % where, line)
    if _SURROGATE.search(text):
        raise TranscriptError(
            _("turn %(number)d contains an escape that is not a character (half of a pair).")
            % where,
            line,
        )
    return ParsedTurn(role=JSON_ROLES[role.strip().lower()], text=text, line=line)


def _json_content(content, where: dict, line: int) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TranscriptError(
            _("the content of turn %(number)d must be a string or a list of text parts.") % where,
            line,
        )
    parts = []
    for part in content:
        if isinstance(part, dict) and part.get("type", "text") == "text":
            part = part.get("text")
        if not isinstance(part, str):
            raise TranscriptError(
                _("turn %(number)d has a content part that is not text.") % where, line
            )
        parts.append(part.strip())
    return "\n\n".join(part for part in parts if part)
