"""``referee serve``'s web app only: pages, the API, the live events and the human seat, for a league
that its driver (``referee.run.serve_driver``, handed the app's event hub) plays on (docs/SERVER.md)."""
