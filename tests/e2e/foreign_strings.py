"""The strings of another language than the participant's on a page
(docs/design/protocol.md §4.11), found with what the platform itself
translates with: the merged gettext catalogues Django loads (the project's,
Django's, allauth's) and the instruments' own texts (SHS items, eligibility,
demographics, administrator feedback).

For the language a page should be in, a *foreign* string is a piece of
another language's text (the English msgid, the other translation) of at
least SHORTEST characters that occurs in none of this language's texts, so
that a word the languages share ("Glatteis", "Neutral") or a translation
that keeps an English term never counts.
"""

from __future__ import annotations

import dataclasses
import re
from functools import cache

from django.utils.translation import trans_real

from scoring.instruments import demographics, eligibility, feedback, shs

LANGUAGES = ("en", "de", "fr")
# Shorter pieces are short words or names, too often the same in two languages.
SHORTEST = 10
# Placeholders, tags and line breaks cut a text into the pieces a page shows whole.
_CUT = re.compile(r"%\(\w+\)[sdfi]|%[sdfi]|\{[^}]*\}|<[^>]+>|\n")
_SPACE = re.compile(r"\s+")


def normalised(text: str) -> str:
    """Spaces collapsed (the page's line breaks, French non-breaking spaces)."""
    return _SPACE.sub(" ", text.replace("\u202f", " ").replace("\xa0", " ")).strip()


def _pieces(text: str) -> set[str]:
    return {p for p in (normalised(part) for part in _CUT.split(text)) if len(p) >= SHORTEST}


def _instrument_texts(value, found: dict[str, list[str]], seen: set[int]) -> None:
    """Every {"en": ..., "de": ..., "fr": ...} text inside an instrument's definition."""
    if id(value) in seen or isinstance(value, str | int | float | bool | type(None)):
        return
    seen.add(id(value))
    if isinstance(value, dict):
        if set(LANGUAGES) <= set(value) and all(isinstance(value[code], str) for code in LANGUAGES):
            for code in LANGUAGES:
                found[code].append(value[code])
            return
        children = list(value.values())
    elif isinstance(value, list | tuple | set | frozenset):
        children = list(value)
    elif dataclasses.is_dataclass(value):
        children = [getattr(value, field.name) for field in dataclasses.fields(value)]
    else:
        return
    for child in children:
        _instrument_texts(child, found, seen)


@cache
def _texts() -> dict[str, list[str]]:
    """Each language's texts: gettext's msgids for English, msgstrs for the others."""
    texts: dict[str, list[str]] = {code: [] for code in LANGUAGES}
    for code in ("de", "fr"):
        # The merged catalogue gettext reads (Django's, allauth's, the project's).
        catalogue = trans_real.translation(code)._catalog  # type: ignore[attr-defined]
        for key in catalogue.keys():
            msgid = key[0] if isinstance(key, tuple) else key
            texts["en"].append(msgid.split("\x04")[-1])  # without its context
            texts[code].append(catalogue[key])
    seen: set[int] = set()
    for module in (shs, eligibility, demographics, feedback):
        for name in dir(module):
            if name.isupper():
                _instrument_texts(getattr(module, name), texts, seen)
    return texts


@cache
def foreign_pieces(language: str) -> frozenset[str]:
    """The pieces of the other languages' texts that no text of `language` holds."""
    texts = _texts()
    own = "\n".join(normalised(text) for text in texts[language])
    return frozenset(
        piece
        for other in LANGUAGES
        if other != language
        for text in texts[other]
        for piece in _pieces(text)
        if piece not in own
    )


def foreign_strings(text: str, language: str) -> list[str]:
    """The other languages' pieces in `text` (a page's visible text), each with
    the words around it, to find it on the page."""
    shown = normalised(text)
    found = sorted(piece for piece in foreign_pieces(language) if piece in shown)
    return [f"{piece!r} in …{_around(shown, piece)}…" for piece in found]


def _around(text: str, piece: str) -> str:
    start = text.find(piece)
    return text[max(0, start - 80) : start + len(piece) + 80]


# What a person reads on the page and what assistive technology reads out:
# the visible text and the title, labels and placeholders, the scripts'
# data-* texts; without the chat's turns (the participant's words and the
# system's answers are no part of the platform's wording).
PAGE_TEXT = """() => {
  const turns = [...document.querySelectorAll('.turn-text')];
  const shown = turns.map(turn => turn.style.display);
  turns.forEach(turn => { turn.style.display = 'none'; });
  const text = document.body.innerText;
  turns.forEach((turn, index) => { turn.style.display = shown[index]; });
  const attributes = [];
  for (const element of document.querySelectorAll('*')) {
    for (const attribute of element.attributes) {
      const name = attribute.name;
      if (['aria-label', 'aria-description', 'title', 'placeholder', 'alt'].includes(name)
          || (name.startsWith('data-') && /\\s/.test(attribute.value))) {
        attributes.push(attribute.value);
      }
    }
  }
  return [document.title, text, ...attributes].join('\\n');
}"""
