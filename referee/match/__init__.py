"""The referee's match part: one match and its bots: playing, serving, launching and confining them,
its outcome, and watching it (what every seat sees).
"""
