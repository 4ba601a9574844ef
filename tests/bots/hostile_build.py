"""An uploaded bot's hostile build step: one attack per run, each attempt and its result printed as
``ATTEMPT what: result`` (GOT ... when it worked), then exit 1 so that the upload stops at its build.

Attacks: ``read PATH...`` (the league file, the results database), ``connect HOST:PORT...``,
``daemon MARK`` (a forked, setsid() process that outlives the build: ``sleep MARK``), ``write PATH...``.
"""

import os
import socket
import sys
import time
from pathlib import Path


def attempt(what, action):
    try:
        print(f"ATTEMPT {what}: GOT {action()}", flush=True)
    except Exception as exc:  # the attempt failed: that is what the test wants to see
        print(f"ATTEMPT {what}: {type(exc).__name__}", flush=True)


def main():
    attack, *args = sys.argv[1:]
    if attack == "read":
        for path in args:
            attempt(f"read {path}", lambda path=path: len(Path(path).read_bytes()))
    elif attack == "write":
        for path in args:
            attempt(f"write {path}", lambda path=path: Path(path).write_text("planted"))
    elif attack == "connect":
        for where in args:
            host, port = where.rsplit(":", 1)
            attempt(
                f"connect {where}",
                lambda host=host, port=port: socket.create_connection((host, int(port)), timeout=3).close(),
            )
    elif attack == "daemon":
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sleep", ["sleep", args[0]])
            os._exit(0)
        time.sleep(0.5)
        print(f"ATTEMPT daemon: started sleep {args[0]}", flush=True)
    sys.exit(1)


if __name__ == "__main__":  # run by a build step; pytest collects this file for its doctests
    main()
