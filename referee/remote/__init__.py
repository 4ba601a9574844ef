"""Remote entrants: bots that play from their authors' machines over TLS, each with a token of its own
(docs/REMOTE.md). ``tokens`` keeps the secrets, ``door`` is the TCP listener, ``lobby`` holds the
connected bots between matches, ``command`` is ``referee token``."""
