"""The Pyramid Arena referee: the only authority in a match between untrusted bots."""
