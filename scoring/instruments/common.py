"""Building blocks shared by the instruments: translated questions with coded options."""

from collections.abc import Iterator
from dataclasses import dataclass

# Languages the instruments are published in.
LANGUAGES = ("en", "de", "fr")

Text = dict[str, str]


def translated(text: Text, language: str) -> str:
    """The text in `language`, falling back to English for unknown codes."""
    return text.get(language) or text["en"]


class Worded:
    """A part of an instrument whose `text` field holds its wording in each language."""

    text: Text

    def text_in(self, language: str) -> str:
        return translated(self.text, language)


class Labelled:
    """A part of an instrument whose `label` field holds its label in each language."""

    label: Text

    def label_in(self, language: str) -> str:
        return translated(self.label, language)


@dataclass(frozen=True)
class Option(Labelled):
    code: int
    label: Text


@dataclass(frozen=True)
class Question(Worded):
    key: str
    text: Text
    options: tuple[Option, ...]

    @property
    def codes(self) -> tuple[int, ...]:
        return tuple(option.code for option in self.options)

    def choices(self, language: str) -> list[tuple[int, str]]:
        return [(option.code, option.label_in(language)) for option in self.options]


@dataclass(frozen=True)
class Questionnaire:
    key: str
    version: str
    title: Text
    questions: tuple[Question, ...]

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    def question(self, key: str) -> Question:
        for question in self.questions:
            if question.key == key:
                return question
        raise KeyError(key)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(question.key for question in self.questions)
