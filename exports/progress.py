"""How far a running export got, reported in a fixed number of ticks.

Every export reports exactly TICKS times, however many rows it writes: a
small export ticks several times on one row, a large one once per stretch of
rows. That keeps the number of progress writes (database queries) the same
for 10 and for 100,000 evaluations, and spaces them evenly through the work.
"""

from collections.abc import Callable

TICKS = 20


class Progress:
    def __init__(self, on_tick: Callable[[int], None], *, start: int = 0, end: int = 95):
        self.on_tick = on_tick
        self.start, self.end = start, end
        self.total = 0
        self.done = 0
        self.ticked = 0
        self._next_at = 0

    def expect(self, total_rows: int) -> None:
        """Set the number of rows the writer is going to produce."""
        self.total = max(0, total_rows)
        self._next_at = self._threshold(1)

    def _threshold(self, tick: int) -> int:
        # Rows after which tick number `tick` (1..TICKS) is due; ceil without floats.
        return -(-self.total * tick // TICKS)

    def advance(self, rows: int = 1) -> None:
        self.done += rows
        while self.ticked < TICKS and self.done >= self._next_at:
            self._tick()

    def finish(self) -> None:
        while self.ticked < TICKS:
            self._tick()

    def _tick(self) -> None:
        self.ticked += 1
        self._next_at = self._threshold(self.ticked + 1)
        percent = self.start + (self.end - self.start) * self.ticked // TICKS
        self.on_tick(percent)
