"""A bot's debug lines: text about its own decisions that it sends with each answer, for its author.

A bot calls :meth:`pyramid_sdk.bot.Bot.debug` while it decides; the SDK sends what it collected with the
decision's answer (``ActionReply.debug``), and the referee keeps it apart from the match, shown only to
the organiser and the bot's author, never to another seat or in the public results (docs/PROTOCOL.md,
"Debug lines"). The caps are the protocol's, so that a bot and its referee agree on what is kept.
"""

from __future__ import annotations

from typing import Final

MAX_DEBUG_BYTES: Final = 1024
"""Bytes of UTF-8 one answer's debug text may have. A longer one is not kept at all (never cut, so a
kept line is always whole): no fault, the action counts, and the bot is told in a notice."""
MAX_DEBUG_PER_MATCH: Final = 64 * 1024
"""Bytes of debug text one seat may have kept in one match; a text that would pass it is not kept."""

_LINES: Final = "_pyramid_debug_lines"
"""The attribute of a bot object that holds the lines of its decision in progress."""


def add_line(bot: object, text: object) -> None:
    """Adds ``text`` (made a string) to the lines ``bot`` will send with its next answer."""
    bot.__dict__.setdefault(_LINES, []).append(str(text))


def take_lines(bot: object) -> str:
    """The lines ``bot`` collected since the last call, one text joined by line breaks ("" if none), and
    forgets them. Text that is not valid Unicode (a lone surrogate) has ``?`` in its place: what goes on
    the wire must be UTF-8.

    >>> class B: pass
    >>> b = B(); add_line(b, "eval 0.4"); add_line(b, 7); take_lines(b), take_lines(b)
    ('eval 0.4\\n7', '')
    """
    lines = bot.__dict__.pop(_LINES, None)
    if not lines:
        return ""
    text = "\n".join(lines)
    return text.encode("utf-8", "replace").decode("utf-8")
