"""The hash chain (docs/design/audit.md §15.2): each row's hash covers its own
content and the hash of the row before it in its chain, so a row edited,
removed or slipped in between breaks every hash after it.

Plain values in, plain values out: the same code hashes a row as it is
written and recomputes it when the chain is verified.
"""

import hashlib
import json
from datetime import UTC, datetime

# The `previous_hash` of a chain's first row.
GENESIS = "0" * 64

# The columns a row's hash covers, in the order the canonical form lists them.
HASHED_FIELDS = (
    "chain",
    "seq",
    "created_at",
    "study_id",
    "actor_id",
    "actor_label",
    "kind",
    "target",
    "details",
    "previous_hash",
)


def canonical(content: dict) -> str:
    """The row as one JSON text: keys sorted, no spaces, the time in UTC to the
    microsecond, so the same row always gives the same text on every database."""
    values = {name: content[name] for name in HASHED_FIELDS}
    created_at: datetime = values["created_at"]
    values["created_at"] = created_at.astimezone(UTC).isoformat(timespec="microseconds")
    return json.dumps(values, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def row_hash(content: dict) -> str:
    return hashlib.sha256(canonical(content).encode("utf-8")).hexdigest()
