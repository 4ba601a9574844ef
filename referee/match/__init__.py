"""The referee's match part: one match and its bots: playing, serving, launching and confining them, and
its outcome.
"""
