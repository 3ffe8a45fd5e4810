"""The conversation rule and the cleaning of stored text (surveys/protocol/chat_rules.py)."""

from surveys.protocol.chat_rules import TurnRow, cleaned, conversation, sent_so_far, unanswered


def rows(*specs):
    """(role, text[, reply_to position]) in order; pk = position + 100."""
    made = []
    for position, (role, text, *reply) in enumerate(specs):
        reply_to = reply[0] + 100 if reply else None
        made.append(TurnRow(position, role, text, reply_to, position + 100))
    return made


def test_an_unanswered_message_is_left_out_and_roles_alternate():
    turns = rows(
        ("system", "Be brief."),
        ("user", "One?"),
        ("assistant", "1.", 1),
        ("user", "Two?"),
        ("error", "", 3),
        ("user", "Three?"),
    )

    sent = conversation(turns[:-1], turns[-1])

    assert [m["role"] for m in sent.messages] == ["system", "user", "assistant", "user"]
    assert [m["content"] for m in sent.messages] == ["Be brief.", "One?", "1.", "Three?"]
    assert sent.sent_positions == [0, 1, 2, 5]


def test_an_answer_given_on_retry_pairs_with_its_question():
    turns = rows(
        ("user", "One?"),
        ("error", "par", 0),
        ("assistant", "1.", 0),
        ("user", "Two?"),
    )

    sent = conversation(turns[:-1], turns[-1])

    assert [m["content"] for m in sent.messages] == ["One?", "1.", "Two?"]


def test_the_latest_system_prompt_is_sent_and_an_emptied_one_is_not():
    changed = rows(("system", "A"), ("user", "1"), ("assistant", "a", 1), ("system", "B"))
    emptied = rows(("system", "A"), ("user", "1"), ("assistant", "a", 1), ("system", ""))
    asked = TurnRow(9, "user", "2", None, 109)

    assert conversation(changed, asked).messages[0] == {"role": "system", "content": "B"}
    assert conversation(emptied, asked).messages[0] == {"role": "user", "content": "1"}


def test_turns_stored_before_answers_named_their_question_answer_the_one_before():
    turns = rows(("user", "One?"), ("error", ""), ("user", "Two?"), ("assistant", "2."))

    assert unanswered(turns) is None
    assert conversation(turns, TurnRow(9, "user", "3", None, 109)).messages[:2] == [
        {"role": "user", "content": "Two?"},
        {"role": "assistant", "content": "2."},
    ]


def test_only_the_last_message_can_be_retried():
    assert unanswered(rows(("user", "One?"), ("error", "", 0))).text == "One?"
    later = rows(("user", "One?"), ("error", "", 0), ("user", "Two?"), ("assistant", "2.", 2))
    assert unanswered(later) is None


def test_control_characters_are_taken_out_and_counted():
    assert cleaned("a\x00b\x1bc\td\ne\r\x7f") == ("abc\td\ne\r", 3)
    assert cleaned("x\ud800y") == ("x\ufffdy", 1)
    assert cleaned("Grüße ‮") == ("Grüße ‮", 0)


def test_what_a_participant_sent_in_a_block_is_counted():
    assert sent_so_far(rows(("system", "long" * 10), ("user", "abc"), ("user", "de"))) == (2, 5)
