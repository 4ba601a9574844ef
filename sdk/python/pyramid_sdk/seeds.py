"""Seed derivation: every random choice of the platform is a pure function of a seed and a name.

SHA-256 rather than Python's ``hash`` or a shared generator, so that the same league seed gives the same
deals on every machine, in every process and in any order of evaluation, and so that one seed (a bot's)
reveals nothing about another (the deck's).
"""

from __future__ import annotations

import hashlib

SEED_BITS = 63


def derive_seed(*parts: int | str) -> int:
    """A 63-bit seed from the parts, e.g. ``derive_seed(match_seed, "deal", 7)``.

    >>> derive_seed(2026, "deal", 1) == derive_seed(2026, "deal", 1) != derive_seed(2026, "deal", 2)
    True
    """
    text = "/".join(str(part) for part in ("pyramid-arena", *parts))
    digest = hashlib.sha256(text.encode()).digest()
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)
