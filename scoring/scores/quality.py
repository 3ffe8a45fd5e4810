"""Quality flags of SHS evaluations (docs/design/analysis.md §8.10): pure rules on plain values.

Four flags mark an evaluation the analyst may want to look at, or leave out:

- speeding: the form was submitted less than the study's threshold of seconds
  after it was first shown;
- straight-lining: all ten answers are the same;
- inconsistent pairs: at least one item pair is flagged by the scoring engine
  (|c_i| > 0.25, scoring.scores.engine), the very flag of `flagged_pairs`;
- too few turns: the block had fewer user turns (or logged prompts) than the
  study's prompt minimum; None ("cannot be judged") when nothing was recorded.

A flag is a marker, not a verdict: the SHS measures perceived reliability, and
a flagged evaluation is still a response. Each rule is here once, for one row
(exports) and for arrays (the study report), and the two agree by test.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.scores.engine import checked_answers, score_array

# 2 s per item: reading ten statements and choosing an answer takes longer.
DEFAULT_SPEEDING_SECONDS = 20
FLAG_KEYS: tuple[str, ...] = (
    "speeding",
    "straight_lining",
    "inconsistent_pairs",
    "too_few_turns",
)


def is_speeding(seconds: float, threshold: float) -> int:
    """1 when the SHS took less than `threshold` seconds (0 turns the flag off)."""
    return int(seconds < threshold)


def is_straight_lined(answers: Sequence[int]) -> int:
    """1 when all ten answers are equal (the raw answers, negative items not reversed)."""
    return int(len(set(answers)) == 1)


def is_inconsistent(flagged_pairs: str | Sequence[str]) -> int:
    """1 when the engine flagged at least one pair: `flagged_pairs` as the engine
    gives it (a tuple of keys) or as it is stored ('SR;DP', '' when none)."""
    return int(len(flagged_pairs) > 0)


def too_few_turns(
    *, user_turns: int | None, logged_prompts: int, overridden: bool, minimum: int
) -> int | None:
    """1 when the block had fewer prompts than the study's minimum, None when
    nothing was recorded that could tell.

    A transcript's user turns count when the block has a transcript
    (`user_turns` is None when it has none); otherwise the prompt log. An
    empty log counts only when the experimenter recorded ending the block
    below the minimum (`overridden`): else the block may never have been logged.
    """
    count = user_turns if user_turns is not None else logged_prompts
    if user_turns is None and logged_prompts == 0 and not overridden:
        return None
    return int(count < minimum)


def flag_arrays(
    answers: NDArray[Any],
    seconds: NDArray[Any],
    threshold: float,
    few_turns: Sequence[int | None],
) -> dict[str, NDArray[np.bool_]]:
    """The four flags of n evaluations as boolean arrays (a flag that cannot be
    judged is False), from the (n, 10) answers, the SHS durations in seconds and
    the too-few-turns flag of each evaluation's block."""
    answers = checked_answers(answers)
    return {
        "speeding": np.asarray(seconds, dtype=float) < threshold,
        "straight_lining": (answers == answers[:, :1]).all(axis=1),
        "inconsistent_pairs": score_array(answers).flag_mask != 0,
        "too_few_turns": np.array([flag == 1 for flag in few_turns], dtype=bool),
    }


def flag_counts(
    flags: dict[str, NDArray[np.bool_]], few_turns: Sequence[int | None]
) -> list[dict[str, str | int]]:
    """How many evaluations each flag marks, and how many it could judge."""
    n = len(few_turns)
    judged = {key: n for key in FLAG_KEYS}
    judged["too_few_turns"] = sum(flag is not None for flag in few_turns)
    return [
        {"key": key, "flagged": int(flags[key].sum()), "judged": judged[key]} for key in FLAG_KEYS
    ]


def any_flag(flags: dict[str, NDArray[np.bool_]]) -> NDArray[np.bool_]:
    """True for each evaluation at least one flag marks."""
    marked: NDArray[np.bool_] = np.logical_or.reduce([flags[key] for key in FLAG_KEYS])
    return marked
