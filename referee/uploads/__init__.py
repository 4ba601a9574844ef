"""Uploaded bots (issue #35): an author's source archive unpacked with every guard, its manifest read,
its build run inside the sandbox, its bot checked, and each version kept in a folder of its own outside
the league's folder until no stored match uses it.

Unlike a league file's ``build:``, which is the organiser's trusted step, an uploaded build is as
untrusted as the bot it builds (docs/SECURITY.md, "Uploaded bots"). ``referee upload`` drives the pipeline
(:func:`referee.uploads.pipeline.upload`); ``referee serve`` can call the same function.
"""

from referee.uploads.errors import UploadError

__all__ = ["UploadError"]
