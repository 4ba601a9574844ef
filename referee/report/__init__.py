"""The referee's report part: what users read: the terminal and text formats, transcripts, the HTML site,
and what each may disclose.
"""
