"""A bot that dies at start, writing its last line to stderr in many small pieces, as C++'s
``std::cerr << "fatal: " << what << ...`` does (one write per ``<<``, each read on its own)."""

import os
import sys
import time

os.write(2, b"loading model\n")
PIECES = ("fat", "al: ", "can", "not ", "open ", "model ", "file ", "'weig", "hts.", "bin'", "\n")
for piece in PIECES:
    os.write(2, piece.encode())
    time.sleep(0.02)
sys.exit(2)
