"""A bot's output, quoted in one line where its failure is reported: the few lines that say why it failed.

The last line a process printed is often not the one that explains it: Node.js ends an uncaught error
with its own version (``Node.js v20.20.2``), after the error's stack frames and properties, and a C++
program writes a line to ``std::cerr`` in pieces, so the last chunk read from its pipe can be a fragment.
The launcher keeps the last bytes of the output whole (:class:`Tail`), and :func:`telling_lines` picks
from their complete lines the error's headline and what follows it, or else the last lines, never a
blank line, a stack frame or a runtime's trailer.
"""

from __future__ import annotations

import re
from typing import Final

TAIL_BYTES: Final = 8192
"""Bytes of a bot's latest output kept in memory, logged or not, to say why it failed."""
QUOTED_LINES: Final = 3
"""Lines of it quoted at most."""
MAX_QUOTE: Final = 200
"""Characters of the quote at most; a longer one is cut and ends with an ellipsis."""

_TRAILER: Final = re.compile(r"^Node\.js v\d+(\.\d+)*$")
"""What a runtime prints after an uncaught error, which says nothing about it: Node.js's version."""
_FRAME: Final = re.compile(r"^\s+(at\s|File \")")
"""A stack frame: JavaScript's, Java's, C#'s (``    at f (file:1:2)``) or Python's (``  File "x.py"``)."""
_HEADLINE: Final = re.compile(r"^[\w$.]*(Error|Exception)(\s*\[[^\]]*\])?(:|$)")
"""An exception's first line: ``Error: Cannot find module 'x'``, ``ModuleNotFoundError: No module named
'x'``, ``java.lang.IllegalStateException: x``, ``TypeError [ERR_X]: x``."""


class Tail:
    """The last :data:`TAIL_BYTES` bytes a process wrote, however many writes it took to write them."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self._data = bytearray()
        self._limit = limit
        self._cut = False
        """Whether bytes were dropped from the front: then the first line kept is a fragment."""

    def add(self, chunk: bytes) -> None:
        self._data += chunk
        if len(self._data) > self._limit:
            del self._data[: len(self._data) - self._limit]
            self._cut = True

    def text(self) -> str:
        """The complete lines kept (and the last one, complete or not: the process may have died in it)."""
        text = self._data.decode("utf-8", "replace")
        if self._cut:
            text = text.partition("\n")[2]
        return text


def meaningful_lines(text: str) -> list[str]:
    """The lines of ``text`` without blank lines, stack frames and runtime trailers, right-stripped.

    >>> meaningful_lines("a\\n\\n    at f (x.js:1:2)\\n  b\\nNode.js v20.20.2\\n")
    ['a', '  b']
    """
    return [
        line.rstrip()
        for line in text.splitlines()
        if line.strip() and not _FRAME.match(line) and not _TRAILER.match(line.strip())
    ]


def telling_lines(text: str, count: int = QUOTED_LINES) -> list[str]:
    """At most ``count`` lines of ``text``, a process's latest output, that say best why it stopped: the
    last error headline and the lines after it, or else the last lines; blank lines, stack frames and
    runtime trailers left out.

    >>> node = "Error: Cannot find module 'left-pad'\\nRequire stack:\\n- /bot/bot.js\\n"
    >>> node += "    at Module._load (node:internal:1:2) {\\n  code: 'MODULE_NOT_FOUND'\\n}\\n"
    >>> node += "\\nNode.js v20.20.2\\n"
    >>> telling_lines(node)
    ["Error: Cannot find module 'left-pad'", 'Require stack:', '- /bot/bot.js']
    >>> telling_lines("loading\\nstarting\\nweights.bin: no such file\\n", 2)
    ['starting', 'weights.bin: no such file']
    """
    kept = [line.strip() for line in meaningful_lines(text)]
    for index in range(len(kept) - 1, -1, -1):
        if _HEADLINE.match(kept[index]):
            return kept[index : index + count]
    return kept[-count:]


def quote(text: str) -> str:
    """:func:`telling_lines` of ``text`` as one line for an error message (``""`` if there are none).

    >>> quote("Traceback (most recent call last):\\n  File \\"bot.py\\", line 1\\n    import numpy\\n"
    ...       "ModuleNotFoundError: No module named 'numpy'\\n")
    "ModuleNotFoundError: No module named 'numpy'"
    """
    joined = " | ".join(telling_lines(text))
    joined = "".join(char if char.isprintable() else "?" for char in joined)
    return joined if len(joined) <= MAX_QUOTE else joined[: MAX_QUOTE - 1] + "…"
