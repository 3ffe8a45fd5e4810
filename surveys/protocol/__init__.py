"""The supervised session protocol (docs/design/protocol.md §4) as services over the session's step.

`StudySession.step` is the single source of truth for where a session is
(the steps and their order: `surveys.steps`). Every write goes through
`state.locked_session()`, which takes a row lock on the session and checks
that the request was made for the session's current step: a POST for another
step (a stale tab, the back button, a replayed form) is refused with
ProtocolError and changes nothing.

- `state`: the lock, the errors and entering a step, shared by all below.
- `flow`: the session as it is run: start, consent, interaction, SHS,
  demographics, feedback.
- `prompts`: the prompt log of a block's interaction and its minimum.
- `curation`: what changes a session's data after the fact: withdrawal,
  erasure on request, a coordinator's correction of an answer.
- `sweeps`: the periodic task that marks idle sessions abandoned.
"""
