"""Sample bots for Pyramid Arena: random, heuristic and Monte Carlo, written as examples for bot authors.

Run one against a referee with ``python -m sample_bots.heuristic`` (it connects through
:func:`pyramid_sdk.client.run`); measure them against each other with ``python -m sample_bots.strength``.
"""
