"""``referee serve``: a league that plays on while a web app shows it live (docs/SERVER.md)."""
