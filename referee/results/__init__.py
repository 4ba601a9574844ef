"""The referee's results part: a league's results database, read and written: the store and its
schema, its errors and its lock, reading it, the history of replaced versions, and which stored deals
may be disclosed. It knows the league (what a league file says) and nothing of how matches are played.
"""
