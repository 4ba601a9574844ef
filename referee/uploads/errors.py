"""The one error of the upload pipeline: one line saying what was refused, where, and why."""

from __future__ import annotations


class UploadError(ValueError):
    """An upload refused: an archive, manifest, build or check that will not do. The message is one line
    for the author (it names the entry, key or step), never a traceback."""
