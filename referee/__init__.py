"""The Pyramid Arena referee: the only authority in a match between untrusted bots."""

from pyramid_sdk import transport as _transport  # noqa: F401  (sets gRPC up before any module imports it)
