"""The referee's run part: playing a league: the competition that plans and records, the one skeleton of
a run (``driver``) and its drivers (in this process, on Dask workers, under ``referee serve``), the host
a match needs, the preflight, the remote door around a run, ``referee run``'s league run, its dry run and
timing.
"""
