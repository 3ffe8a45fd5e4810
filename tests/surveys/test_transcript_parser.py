"""Reading an external system's transcript (docs/design/transcripts.md §10.4): the three
formats, role names in English, German and French, and every error naming
its line. The parser touches no database."""

import json

import pytest

from surveys.transcript_import import (
    MAX_CHARACTERS,
    ParsedTurn,
    TranscriptError,
    decode_upload,
    parse_transcript,
)


def _pairs(turns: list[ParsedTurn]) -> list[tuple[str, str]]:
    return [(turn.role, turn.text) for turn in turns]


def _error(text: str, fmt: str) -> TranscriptError:
    with pytest.raises(TranscriptError) as caught:
        parse_transcript(text, fmt)
    return caught.value


# -- plain text --------------------------------------------------------------------------


def test_plain_text_turns_run_to_the_next_role_line():
    text = (
        "System: Answer briefly.\n"
        "User: Who wrote Faust?\n"
        "Assistant:\n"
        "Goethe.\n"
        "\n"
        "Note: part one appeared in 1808.\n"
        "user: And the second part?\n"
    )
    turns = parse_transcript(text, "text")
    assert _pairs(turns) == [
        ("system", "Answer briefly."),
        ("user", "Who wrote Faust?"),
        ("assistant", "Goethe.\n\nNote: part one appeared in 1808."),
        ("user", "And the second part?"),
    ]
    assert [turn.line for turn in turns] == [1, 2, 3, 7]


@pytest.mark.parametrize(
    "text",
    [
        "Nutzer: Wer schrieb Faust?\nAssistent: Goethe.",
        "Benutzerin: Wer schrieb Faust?\nKI: Goethe.",
        "Du hast gesagt:\nWer schrieb Faust?\nChatGPT hat gesagt:\nGoethe.",
        "Utilisateur : Qui a écrit Faust ?\nAssistant : Goethe.",
        "Utilisatrice\u202f: Qui a écrit Faust ?\nIA\u00a0: Goethe.",
        "Vous avez dit :\nQui a écrit Faust ?\nChatGPT a dit :\nGoethe.",
        "YOU SAID:\nWho wrote Faust?\nCLAUDE:\nGoethe.",
    ],
)
def test_german_french_and_interface_role_names(text):
    assert [role for role, _text in _pairs(parse_transcript(text, "text"))] == [
        "user",
        "assistant",
    ]


def test_windows_line_endings_and_a_byte_order_mark():
    turns = parse_transcript("\ufeffUser: a\r\nb\r\nAssistant: c\r\n", "text")
    assert _pairs(turns) == [("user", "a\nb"), ("assistant", "c")]


def test_labels_in_an_answer_that_are_no_role_names_are_text():
    text = "User: help?\nAssistant: Options:\nHelp: call 112\nUsers: many\nSysteme: ok"
    turns = parse_transcript(text, "text")
    assert _pairs(turns)[1] == ("assistant", "Options:\nHelp: call 112\nUsers: many")
    assert _pairs(turns)[2] == ("system", "ok")  # "Système" without its accent


@pytest.mark.parametrize(
    "line",
    [
        "Note: part one appeared in 1808.",
        "Example: Faust I",
        "Use: pip install faust",
        "Both: Faust I and Faust II",
        "Users: many",
        "Humans: all",
        "Your: pronoun",
        "Assistance: call 112",
        "Assistenten: keine",
        "Nutzen: gering",
        "Nous : deux parties",
        "Hi: hello",
        "Summary:",
    ],
)
def test_a_label_that_is_no_typo_of_a_role_name_stays_in_the_answer(line):
    # Only a near miss of a name of four letters or more, first letter kept, is a typo.
    turns = parse_transcript(
        f"User: Who wrote Faust?\nAssistant: Goethe.\n{line}\nUser: ok", "text"
    )
    assert _pairs(turns) == [
        ("user", "Who wrote Faust?"),
        ("assistant", f"Goethe.\n{line}"),
        ("user", "ok"),
    ]


def test_a_misspelt_role_name_is_refused_with_the_names_accepted():
    error = _error("User: hi\nAssistant: hello\nUsr: and?", "text")
    assert error.line == 3
    names = str(error).partition("in any letter case: ")[2]
    assert names.startswith("user, you, human, me, nutzer")
    assert "assistant" in names and "system prompt" in names and "utilisatrice" in names


def test_role_lines_inside_a_code_fence_are_text():
    text = "User: a script?\nAssistant: Here:\n```\nUser: hello\n```\nDone."
    assert _pairs(parse_transcript(text, "text"))[1] == (
        "assistant",
        "Here:\n```\nUser: hello\n```\nDone.",
    )


# -- Markdown ----------------------------------------------------------------------------


def test_markdown_headings_and_bold_labels():
    text = (
        "# Faust, a conversation\n"
        "\n"
        "## You said:\n"
        "Who wrote *Faust*?\n"
        "\n"
        "---\n"
        "\n"
        "### ChatGPT\n"
        "### Summary\n"
        "Goethe.\n"
        "**Nutzer:** Und Teil zwei?\n"
        "__Assistent__\n"
        "1832.\n"
        "**Utilisateur** : Merci\n"
    )
    turns = parse_transcript(text, "markdown")
    assert _pairs(turns) == [
        ("user", "Who wrote *Faust*?"),  # the separator rule is the exporter's
        ("assistant", "### Summary\nGoethe."),  # a heading that is no role is the answer's
        ("user", "Und Teil zwei?"),
        ("assistant", "1832."),
        ("user", "Merci"),
    ]
    assert [turn.line for turn in turns] == [3, 8, 11, 12, 14]


def test_markdown_accepts_plain_role_lines_too():
    assert _pairs(parse_transcript("User: a\nAssistant: b", "markdown")) == [
        ("user", "a"),
        ("assistant", "b"),
    ]


# -- JSON --------------------------------------------------------------------------------


def test_json_list_of_role_and_content():
    text = json.dumps(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Who wrote Faust?", "name": "ignored"},
            {"role": "assistant", "content": [{"type": "text", "text": "Goethe."}, "Yes."]},
            {"role": "Developer", "content": "later instruction"},
        ],
        indent=1,
    )
    turns = parse_transcript(text, "json")
    assert _pairs(turns) == [
        ("system", "Be brief."),
        ("user", "Who wrote Faust?"),
        ("assistant", "Goethe.\n\nYes."),
        ("system", "later instruction"),
    ]
    assert [turn.line for turn in turns] == [2, 6, 11, 21]


# -- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fmt", "line", "words"),
    [
        ("Hello there\nUser: hi", "text", 1, "before the first turn"),
        ("\n\nDate: today\nUser: hi", "text", 3, "unknown role “Date”"),
        ("User: hi\nAsistant: hello", "text", 2, "did you mean “assistant”"),
        ("User: hi\nAssistant:\n\nUser: again", "text", 2, "the turn is empty"),
        ("User: hi\n**Asistent:** hallo", "markdown", 2, "did you mean “assistent”"),
        ("Nutzr: hallo", "text", 1, "did you mean “nutzer”"),
        ("User: hi\nAssistant: hello\nUsr: and you?\nAssistant: fine", "text", 3,
         "unknown role “Usr” (did you mean “user”?)"),
        ("User: hi\nAssistant: hello\n\nUesr said: and you?", "text", 4, "did you mean “user”"),
        ("User: hi\nAssistant: hello\n### Cluade\nbye", "markdown", 3, "did you mean “claude”"),
        ("Utilisatuer : bonjour", "text", 1, "did you mean “utilisateur”"),
        ("# Title\nSome preface\n## User\nhi", "markdown", 2, "before the first turn"),
        ("## User\n\n## Assistant\nhello", "markdown", 1, "the turn is empty"),
        ('[\n {"role": "user", "content": "hi"}\n {"role": "x"}\n]', "json", 3, "column 2"),
        ('[\n {"role": "user", "content": "hi"},\n {"role": "tool", "content": "x"}\n]',
         "json", 3, 'unknown role "tool"'),
        ('[\n {"role": "user", "content": "hi"},\n "just text"\n]', "json", 3, "not an object"),
        ('[\n {"role": "user", "content": 42}\n]', "json", 2, "a string or a list"),
        ('[\n {"role": "user", "content": [{"type": "image_url"}]}\n]', "json", 2, "not text"),
        ('[\n {"role": "user", "content": "  "}\n]', "json", 2, "is empty"),
        ('\n\n{"role": "user", "content": "hi"}', "json", 3, "must be a list"),
        ("User: fine\nAssistant: a NUL\x00 here", "text", 2, "NUL byte"),
    ],
)  # fmt: skip
def test_errors_name_the_line(text, fmt, line, words):
    error = _error(text, fmt)
    assert error.line == line
    assert str(error).startswith(f"Line {line}: ")
    assert words in str(error)


@pytest.mark.parametrize(
    ("text", "fmt", "words"),
    [
        ("", "text", "empty"),
        ("  \n\n", "markdown", "empty"),
        ("Assistant: I am alone here.", "text", "no user turn"),
        ('[{"role": "system", "content": "x"}]', "json", "no user turn"),
        ("User: hi", "docx", "Unknown transcript format"),
        ("User: " + "x" * MAX_CHARACTERS, "text", "longer than"),
    ],
)
def test_errors_about_the_whole_text(text, fmt, words):
    error = _error(text, fmt)
    assert error.line is None
    assert words in str(error)


def test_errors_speak_the_users_language():
    from django.utils import translation

    with translation.override("de"):
        assert str(_error("Hallo\nNutzer: hi", "text")).startswith("Zeile 1: ")
        assert str(_error("Nutzer: hi\nUsr: du?", "text")).startswith(
            "Zeile 2: unbekannte Rolle „Usr“ (meinten Sie „user“?). Die Rollennamen, "
            "in beliebiger Groß- und Kleinschreibung: user, you,"
        )
    with translation.override("fr"):
        message = str(_error("Vous : salut\nUsr : et toi ?", "text"))
        assert message.startswith("Ligne 2")
        assert "rôle inconnu « Usr » (vouliez-vous dire « user » ?). Les noms de rôle" in message


def test_an_upload_that_is_not_utf8_names_its_line():
    with pytest.raises(TranscriptError) as caught:
        decode_upload("User: hi\nAssistant: caf\u00e9".encode("latin-1"))
    assert caught.value.line == 2
    assert decode_upload("\ufeffUser: é".encode()) == "User: é"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('[\n {"role": "user", "content": "a\\u0000b"}\n]', 2, "NUL"),
        ('[\n {"role": "user", "content": "hi"},\n {"role": "assistant", "content": "\\ud800"}\n]',
         3, "not a character"),
    ],
)  # fmt: skip
def test_json_escapes_that_no_text_can_hold_name_their_turn(text, line, words):
    # PostgreSQL stores neither a NUL nor half of a surrogate pair: refused here, not at the save.
    error = _error(text, "json")
    assert error.line == line
    assert words in str(error)


@pytest.mark.parametrize(
    "text",
    [
        "[" * 100_000,
        '[{"role": "user", "content": "hi", "x": ' + "[" * 5_000 + "]" * 5_000 + "}]",
    ],
)
def test_json_nested_too_deeply_is_refused(text):
    assert "nested too deeply" in str(_error(text, "json"))


def test_a_json_number_of_any_length_is_no_crash():
    # Python refuses to read integers of more than 4,300 digits as int.
    number = "1" * 5_000
    assert _error(f'[{{"role": "user", "content": {number}}}]', "json").line == 1
    turns = parse_transcript(f'[{{"role": "user", "content": "hi", "tokens": {number}}}]', "json")
    assert _pairs(turns) == [("user", "hi")]


UTF16_TEXT = "User: Grüß Gott\nAssistant: Servus"


@pytest.mark.parametrize(
    "data",
    [
        UTF16_TEXT.encode("utf-16"),  # Windows' "Unicode": little-endian with its mark
        ("\ufeff" + UTF16_TEXT).encode("utf-16-be"),
    ],
)
def test_an_upload_in_utf16_with_a_byte_order_mark_is_read(data):
    assert decode_upload(data) == UTF16_TEXT


def test_an_upload_with_nul_bytes_is_not_taken_for_utf8():
    # UTF-16 without a byte-order mark is valid UTF-8 with a NUL after every letter.
    with pytest.raises(TranscriptError) as caught:
        decode_upload("User: hi\nAssistant: ho".encode("utf-16-le"))
    assert caught.value.line == 1
    assert "not UTF-8" in str(caught.value)
