"""The referee's league part: a league: its configuration, schedule, executors, stored results and ratings."""
