"""The ratings after each rated game, kept in arrays: what a leaderboard's chart draws.

A long-lived reader (``referee serve``'s) folds the ratings forward as matches are stored, and its history
grows by an entry per entrant and rated game. As tuples of objects an entry took about 150 bytes, and every
leaderboard made of it copied the list; here it takes 33 (a position, a game's label shared with the
schedule, the entrant's number, μ and σ), and a leaderboard holds a snapshot that shares the arrays: they
are only ever appended to, so the first ``length`` entries never change.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import overload

Entry = tuple[int, str, str, float, float]
"""(schedule position, rated game, entrant, μ, σ)."""


class RatingHistory(Sequence[Entry]):
    """Entries after each other (see the module's doc): :meth:`append` to the live one, :meth:`snapshot`
    for one that stays as it is now, :meth:`fork` for one that goes on from here without changing this.

    >>> history = RatingHistory()
    >>> history.append((5, "r1:{a,b}", "a", 26.0, 7.5))
    >>> frozen = history.snapshot(); history.append((5, "r1:{a,b}", "b", 24.0, 7.5))
    >>> len(frozen), list(history)[1], history[::2] == (history[0],)
    (1, (5, 'r1:{a,b}', 'b', 24.0, 7.5), True)
    """

    __slots__ = (
        "_base",
        "_labels",
        "_length",
        "_mus",
        "_named",
        "_names",
        "_numbers",
        "_positions",
        "_sigmas",
    )

    def __init__(self, entries: Sequence[Entry] = ()) -> None:
        self._base: RatingHistory | None = None
        self._positions = array("q")
        self._labels: list[str] = []
        self._names: list[str] = []
        self._named: dict[str, int] = {}
        self._numbers = array("H")
        self._mus = array("d")
        self._sigmas = array("d")
        self._length: int | None = None
        for entry in entries:
            self.append(entry)

    def append(self, entry: Entry) -> None:
        if self._length is not None:
            raise TypeError("a snapshot of a rating history is not appended to")
        position, label, name, mu, sigma = entry
        number = self._named.get(name)
        if number is None:
            number = self._named[name] = len(self._names)
            self._names.append(name)
        self._positions.append(position)
        self._labels.append(label)
        self._numbers.append(number)
        self._mus.append(mu)
        self._sigmas.append(sigma)

    def snapshot(self) -> RatingHistory:
        """This history as it is now, sharing its arrays."""
        other = RatingHistory.__new__(RatingHistory)
        other._base, other._positions, other._labels = self._base, self._positions, self._labels
        other._names, other._named, other._numbers = self._names, self._named, self._numbers
        other._mus, other._sigmas, other._length = self._mus, self._sigmas, len(self)
        return other

    def fork(self) -> RatingHistory:
        """A history that goes on from this one as it is now (a snapshot of it), appended to on its own."""
        other = RatingHistory()
        other._base = self.snapshot()
        return other

    def _own(self) -> int:
        return len(self._positions) if self._length is None else self._length - self._below()

    def _below(self) -> int:
        return 0 if self._base is None else len(self._base)

    def __len__(self) -> int:
        return self._below() + self._own() if self._length is None else self._length

    @overload
    def __getitem__(self, index: int) -> Entry: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Entry, ...]: ...

    def __getitem__(self, index: int | slice) -> Entry | tuple[Entry, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        length = len(self)
        if index < 0:
            index += length
        if not 0 <= index < length:
            raise IndexError(index)
        below = self._below()
        if index < below:
            assert self._base is not None
            return self._base[index]
        i = index - below
        return (
            self._positions[i],
            self._labels[i],
            self._names[self._numbers[i]],
            self._mus[i],
            self._sigmas[i],
        )

    def __iter__(self) -> Iterator[Entry]:
        if self._base is not None:
            yield from self._base
        names = self._names
        for i in range(self._own()):
            yield self._positions[i], self._labels[i], names[self._numbers[i]], self._mus[i], self._sigmas[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RatingHistory({list(self)!r})"
