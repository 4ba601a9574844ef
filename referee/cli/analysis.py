"""``referee analyze``: where each decision of a played match lost points (docs/ANALYSIS.md). The
options are parsed here; the work is :func:`referee.analyze.analyze`, imported when it runs, so
that ``referee analyze --help`` loads no league, report or engine."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import click

DEFAULT_SAMPLES: Final = 8
"""``referee.analysis.estimate.DEFAULT_SAMPLES``, written out so that the help need not load the
estimator (tests/test_cli_package.py checks they agree)."""


@click.command("analyze")
@click.argument("source", metavar="LEAGUE|FILE.jsonl", type=click.Path(dir_okay=False))
@click.argument("match_id", required=False)
@click.option(
    "--samples",
    type=click.IntRange(2, 10_000),
    default=DEFAULT_SAMPLES,
    show_default=True,
    help="Sampled worlds per decision and per luck figure: the error falls as its square root.",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Of the sampling.")
@click.option(
    "--all", "every", is_flag=True, help="Every match of LEAGUE's complete tables not analysed yet."
)
@click.option(
    "--summary",
    is_flag=True,
    help="Only the per-entrant summary of LEAGUE's analysed matches; analyse nothing.",
)
@click.option(
    "--report",
    "report_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="With --all: rewrite LEAGUE's HTML report in this folder after every match analysed.",
)
@click.option("--json", "as_json", is_flag=True, help="JSON on stdout instead of text.")
def analyze_command(
    source: str,
    match_id: str | None,
    samples: int,
    seed: int,
    every: bool,
    summary: bool,
    report_dir: Path | None,
    as_json: bool,
) -> None:
    """Where each decision of a played match lost points, and how lucky each deal was (docs/ANALYSIS.md).

    At every decision, each legal action is played out in sampled worlds (the hidden cards dealt at
    random, as the deciding seat could not tell them apart) by the heuristic sample bot's policy; the
    chosen action's loss is the best action's mean less its own. Seeded: the same --seed and --samples
    print the same figures.

    From a league, MATCH_ID is an id from `referee matches` or a schedule position from 1; the analysis is
    kept beside the results, and `referee report` shows it on the match's page. --all analyses every
    match not analysed yet, --summary prints the per-entrant figures of those analysed. A table's deals
    (and so its analysis) show only once every match of that table is played. A FILE.jsonl is a record of
    `referee match --record` or `referee export` (MATCH_ID: an id or a line from 1).

    --all runs at a low CPU priority, so beside a `referee run` of the league it never slows its matches.
    """
    from referee.analyze import analyze

    analyze(source, match_id, samples, seed, every, summary, report_dir, as_json)
