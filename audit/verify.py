"""Checking the chains (docs/design/audit.md §15.2): every row's hash is
recomputed from its content and compared with the one stored, and with the
`previous_hash` of the row after it. The first row that fails is named."""

from dataclasses import dataclass

from audit.chain import GENESIS, HASHED_FIELDS, row_hash
from audit.models import AuditEntry

# Rows are read in batches: a chain of a long study may hold many thousands.
BATCH = 2000


@dataclass(frozen=True)
class ChainState:
    chain: str
    rows: int
    # The first broken row and what is wrong with it; None when intact.
    broken_id: int | None = None
    problem: str = ""

    @property
    def intact(self) -> bool:
        return self.broken_id is None


def chains() -> list[str]:
    return sorted(AuditEntry.objects.values_list("chain", flat=True).distinct())


def chain_verify(chain: str) -> ChainState:
    rows = (
        AuditEntry.objects.filter(chain=chain)
        .order_by("seq")
        .values("id", "hash", *HASHED_FIELDS)
        .iterator(chunk_size=BATCH)
    )
    expected_seq, expected_previous, count = 1, GENESIS, 0
    for row in rows:
        count += 1
        problem = _problem(row, expected_seq, expected_previous)
        if problem:
            return ChainState(chain, count, broken_id=row["id"], problem=problem)
        expected_seq, expected_previous = row["seq"] + 1, row["hash"]
    return ChainState(chain, count)


def _problem(row: dict, expected_seq: int, expected_previous: str) -> str:
    if row["seq"] != expected_seq:
        return f"is number {row['seq']} where {expected_seq} was next: rows are missing"
    if row["previous_hash"] != expected_previous:
        return "does not follow the row before it (its previous hash differs)"
    if row_hash(row) != row["hash"]:
        return "was changed after it was written (its content no longer gives its hash)"
    return ""
