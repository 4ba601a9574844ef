"""The referee's league part: what a league file says and which matches it plays: its configuration,
formats and designs, its schedule and plans, ratings from match summaries. It opens no database.
"""
