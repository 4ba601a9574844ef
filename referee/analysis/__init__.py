"""Match analysis (``referee analyze``): what each decision of a played match cost, and how lucky each deal
was, estimated from sampled worlds played out by a reference policy. Pure estimation in
:mod:`~referee.analysis.estimate`, per-entrant figures in :mod:`~referee.analysis.summary`, the files beside
a league's results (and which of its matches are due) in :mod:`~referee.analysis.storage`, text in
:mod:`~referee.analysis.text`. The command that reads a league, analyses and rewrites its report is
:mod:`referee.cli.analysis`, above the report, so that the report can show kept analyses without this
package importing the report."""
