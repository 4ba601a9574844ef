"""A bot that dies at start, writing its last line to stderr in many small pieces, as C++'s
``std::cerr << "fatal: " << what << ...`` does (one write per ``<<``, each read on its own)."""

import os
import sys
import time

PIECES = ("fat", "al: ", "can", "not ", "open ", "model ", "file ", "'weig", "hts.", "bin'", "\n")

if __name__ == "__main__":  # pytest's doctest collection imports this file too
    os.write(2, b"loading model\n")
    for piece in PIECES:
        os.write(2, piece.encode())
        time.sleep(0.02)
    sys.exit(2)
