"""The Pyramid Arena referee: the only authority in a match between untrusted bots.

Importing the package loads nothing, so that ``referee --help`` and the commands that only read results
start fast and never load gRPC. The three modules that load gRPC (``referee.match.sessions``,
``launcher`` and ``server``) each apply the referee's gRPC settings first (``pyramid_sdk.transport``).
"""
