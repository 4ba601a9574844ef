"""Files the referee writes whole: a reader (a browser on the report, a bot author opening an analysis,
a second command) sees the old file or the new one, never half of one. A leaf: the report, the analyses
and the commands above them all write through it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
