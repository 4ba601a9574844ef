"""A player's pyramid: the scoresheet of his 16 declarations, and its drawing as on paper.

A :class:`Pyramid` is immutable; :meth:`Pyramid.add` returns a new one. The engine shares the same
instance with every observation until the next deal is scored, which keeps observations cheap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from pyramid_sdk.rules import QUOTAS, score


@dataclass(frozen=True, slots=True)
class PyramidEntry:
    """One filled slot: what was declared, how many tricks were taken, the points scored."""

    declared: int
    taken: int
    points: int


@dataclass(frozen=True, slots=True)
class Pyramid:
    """Entries in the order they were made, and what is still open.

    >>> p = Pyramid().add(6, 4).add(5, 4).add(5, 0).add(3, 3)
    >>> p.total, p.remaining
    (24, (1, 2, 3, 3, 3, 0, 0))
    >>> p.open_numbers
    (0, 1, 2, 3, 4)
    """

    entries: tuple[PyramidEntry, ...] = ()
    remaining: tuple[int, ...] = QUOTAS
    """For each number 0-6, how many more times it must be declared."""
    total: int = 0

    @property
    def open_numbers(self) -> tuple[int, ...]:
        """The numbers that may still be declared, ascending."""
        return _OPEN_NUMBERS[self.remaining]

    @property
    def full(self) -> bool:
        return not any(self.remaining)

    def can_declare(self, tricks: int) -> bool:
        return 0 <= tricks < len(self.remaining) and self.remaining[tricks] > 0

    def add(self, declared: int, taken: int) -> Pyramid:
        """The pyramid after one more deal as declarer. The caller checks :meth:`can_declare` first."""
        points = score(declared, taken)
        remaining = list(self.remaining)
        remaining[declared] -= 1
        return Pyramid(
            (*self.entries, PyramidEntry(declared, taken, points)), tuple(remaining), self.total + points
        )


def _open_numbers(remaining: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(n for n, left in enumerate(remaining) if left)


class _OpenNumbersCache(dict[tuple[int, ...], tuple[int, ...]]):
    """Memo of ``remaining -> open numbers``: there are only 2**7 distinct answers."""

    def __missing__(self, key: tuple[int, ...]) -> tuple[int, ...]:
        value = self[key] = _open_numbers(key)
        return value


_OPEN_NUMBERS: Final = _OpenNumbersCache()


def render_pyramid(pyramid: Pyramid, title: str = "") -> str:
    """The scoresheet as drawn on paper: the 16 declaration slots as a pyramid-shaped centre column
    (0; 1 1; 2 2 2; 3 3 3 3; 4 4 4; 5 5; 6), the tricks taken on the left, the points on the right.

    Slots fill in the order the declarations were made; an open slot shows a dot on both sides.

    >>> print(render_pyramid(Pyramid().add(6, 4).add(5, 4).add(5, 0).add(3, 3), "North"))
    North — total 24
           taken  declared   points
               ·      0        ·
            ·  ·     1 1       ·   ·
         ·  ·  ·    2 2 2      ·   ·   ·
      3  ·  ·  ·   3 3 3 3    10   ·   ·   ·
         ·  ·  ·    4 4 4      ·   ·   ·
            4  0     5 5       8   0
               4      6        6
    """
    filled: list[list[PyramidEntry]] = [[] for _ in QUOTAS]
    for entry in pyramid.entries:
        filled[entry.declared].append(entry)
    widest = max(QUOTAS)
    left, centre = 3 * widest, 2 * widest + 5
    lines = [f"{title} — total {pyramid.total}" if title else f"total {pyramid.total}"]
    lines.append(f"{'taken':>{left}}{'declared':^{centre}}{'points':<}")
    for number, quota in enumerate(QUOTAS):
        done = filled[number]
        open_slots = ["·"] * (quota - len(done))
        taken = " ".join(f"{cell:>2}" for cell in [str(e.taken) for e in done] + open_slots)
        points = " ".join(f"{cell:>3}" for cell in [str(e.points) for e in done] + open_slots)
        slots = " ".join([str(number)] * quota)
        lines.append(f"{taken:>{left}}{slots:^{centre}}{points}".rstrip())
    return "\n".join(lines)
