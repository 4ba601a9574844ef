"""gRPC settings for this process, applied by :func:`configure`, which must run before ``grpc`` is imported.

Since grpcio 1.80, Python's gRPC moves every message through the threads of its new I/O engine
(EventEngine). A referee and its bots pass each decision between five processes on as few as two cores,
and there its extra thread hand-offs about double a round trip: four bots answering in
turn took 637-797 µs a round trip with them and 296-499 µs with gRPC's older I/O manager, measured in
the same runs (``benchmarks/README.md``). So the referee and the Python SDK switch the new engine off
for their own process through ``GRPC_EXPERIMENTS``, which gRPC reads once, while it loads.

The setting is skipped, and gRPC's defaults stand, when:

- ``GRPC_EXPERIMENTS`` is already set: the user chose; set it to any value, even empty, to opt out;
- ``grpc`` was imported before this module: it is too late;
- the installed grpcio is outside the versions checked to have those switches (an unknown name would
  make gRPC log an error line in every process).

The same load silences gRPC's own log (``GRPC_VERBOSITY=NONE``): its C core otherwise prints raw lines
such as ``I1201 … chttp2_transport.cc:1403] … Got goaway`` or ``… ssl_transport_security.cc … Handshake
failed`` on stderr, between the lines of the bot or the referee, for events our code reports in its own
words (a bot: the status it reconnects after; the referee: its log). They stay when the user asked for
them: ``GRPC_VERBOSITY`` or ``GRPC_TRACE`` already set (the referee's ``--log-level debug`` may set
``GRPC_VERBOSITY`` before gRPC loads).

Both variables are removed again once gRPC has read them, so processes this one starts (bots) inherit the
environment it was given.

Importing this module changes nothing: the places that load gRPC for our code call :func:`configure`
first, in plain sight — ``referee/match/sessions.py``, ``launcher.py`` and ``server.py`` for the referee
(so that ``import referee`` and ``referee --help`` load no gRPC), and ``pyramid_sdk/client.py`` for a
bot. The game library (``import pyramid_sdk``) never loads gRPC.
"""

from __future__ import annotations

import os
import re
import sys
from importlib import util
from pathlib import Path
from typing import Final

EXPERIMENTS_VARIABLE: Final = "GRPC_EXPERIMENTS"
OLDER_IO_MANAGER: Final = "-event_engine_client,-event_engine_listener"
VERBOSITY_VARIABLE: Final = "GRPC_VERBOSITY"
QUIET: Final = "NONE"
ASKED_FOR_LOGS: Final = (VERBOSITY_VARIABLE, "GRPC_TRACE")
"""Either set: the user wants gRPC's log, and it is left as they set it."""
CHECKED_VERSIONS: Final = ((1, 80), (1, 85))
"""The first and last grpcio ``(major, minor)`` known to have both switches, and the internal calls of
``pyramid_sdk.stream.ThreadStream``."""


def _grpcio_version() -> tuple[int, int] | None:
    """The installed grpcio's ``(major, minor)``, read from the version file grpcio ships in its package,
    without importing gRPC (too early) or ``importlib.metadata`` (which costs a bot process a tenth of
    its start-up: it scans every installed distribution and loads the ``email`` package)."""
    try:
        spec = util.find_spec("grpc")
        if spec is None or spec.origin is None:
            return None
        text = (Path(spec.origin).parent / "_grpcio_metadata.py").read_text(encoding="utf-8")
    except (ImportError, ValueError, OSError):
        return None
    found = re.search(r"__version__\s*=\s*[\"']+(\d+)\.(\d+)", text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def grpcio_checked() -> bool:
    """Whether the installed grpcio is one of the versions this SDK's tuning was checked with."""
    version = _grpcio_version()
    return version is not None and CHECKED_VERSIONS[0] <= version <= CHECKED_VERSIONS[1]


_tuned: bool | None = None


def configure() -> bool:
    """Switches this process's gRPC to the older I/O manager and silences its log, where it still can (see
    the module); returns whether it runs with the older I/O manager. Idempotent: the first call decides,
    later ones return the same answer."""
    global _tuned  # noqa: PLW0603  (one decision per process, as gRPC reads the variables once)
    if _tuned is None:
        _tuned = _load()
    return _tuned


def tuned() -> bool:
    """Whether this process runs gRPC with the older I/O manager (False before :func:`configure`)."""
    return bool(_tuned)


def _load() -> bool:
    if "grpc" in sys.modules:
        return False
    settings = {}
    if EXPERIMENTS_VARIABLE not in os.environ and grpcio_checked():
        settings[EXPERIMENTS_VARIABLE] = OLDER_IO_MANAGER
    if not any(name in os.environ for name in ASKED_FOR_LOGS):
        settings[VERBOSITY_VARIABLE] = QUIET
    if not settings:
        return False
    os.environ.update(settings)
    try:
        import grpc  # noqa: F401, PLC0415  (the import is the point: gRPC reads the variables now)
    finally:
        for name in settings:
            del os.environ[name]
    return EXPERIMENTS_VARIABLE in settings
