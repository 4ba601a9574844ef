"""``referee analyze``: where each decision of a played match lost points (docs/ANALYSIS.md). It reads a
match from a league's results or a records file, refuses a table whose deals are still hidden, and
prints and keeps the analysis; with ``--all`` it analyses every match still due, rewriting the report
after each. The work is the library's (:mod:`referee.analysis`: the estimator, the kept analyses and
what is due), imported inside the functions that use it, so that ``referee analyze --help`` loads no
league, report or engine. Errors are one line; nothing it did not write is touched."""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import click

from referee.cli.common import InputError

if TYPE_CHECKING:
    from referee.analysis.estimate import Analysis
    from referee.league.config import League
    from referee.league.schedule import ScheduledMatch
    from referee.match.outcome import MatchStatus
    from referee.results.store import StoredMatch

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
    if report_dir is not None and not every:
        raise click.UsageError("--report goes with --all: the report is rewritten as matches are analysed")
    if source.endswith(".jsonl"):
        if every or summary:
            raise click.UsageError("--all and --summary read a league's results, not a records file")
        analysis, what = _from_records(Path(source), match_id, samples, seed)
        _print_match(analysis, what, as_json)
        return
    read = _league_results(source)
    if summary or every:
        if match_id is not None:
            raise click.UsageError("give a MATCH_ID, or --all / --summary for the whole league, not both")
        if every:
            _analyse_all(read, samples, seed, report_dir)
        _print_summary(read, as_json)
        return
    if match_id is None:
        raise click.UsageError(
            f"which match of {source}? give its id or schedule position, or --all, or --summary"
        )
    _analyse_one(read, source, match_id, samples, seed, as_json)


@dataclass(frozen=True)
class _LeagueResults:
    """A league and its stored matches, whole, as ``referee analyze`` reads them."""

    league: League
    seed: int
    """The seed its results were stored under (a secret one comes from the database)."""
    schedule: tuple[ScheduledMatch, ...]
    stored: dict[str, StoredMatch]


def _league_results(source: str) -> _LeagueResults:
    """The league, its schedule and its stored matches, read-only; one line if any cannot be read."""
    from referee.cli.storage import league_of
    from referee.league.planning import schedule_of
    from referee.results.errors import StoreError
    from referee.results.reading import open_results

    league = league_of(source, check_commands=False)
    try:
        store, league, seed = open_results(league, source)
        try:
            stored = store.matches()
        finally:
            store.close()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    return _LeagueResults(league, seed, schedule_of(league, seed, stored), stored)


def _analyse_one(
    read: _LeagueResults, source: str, match_id: str, samples: int, seed: int, as_json: bool
) -> None:
    """One match of the league, by id or schedule position, printed (and kept)."""
    from referee.results.disclosure import HIDDEN_NOTE, disclosure

    league, schedule = read.league, read.schedule
    if match_id.isdigit() and 1 <= int(match_id) <= len(schedule):
        match_id = schedule[int(match_id) - 1].match_id
    match = read.stored.get(match_id)
    if match is None:
        raise click.ClickException(
            f"no stored match {match_id!r} in {league.database}; `referee matches {source}` lists them"
        )
    if not disclosure(schedule, read.stored).deals_shown(match):
        raise click.ClickException(
            f"match {match_id} of {league.database}: {HIDDEN_NOTE}, so is its analysis"
        )
    _check_complete(match.status, match_id)
    names = {s.match_id: s.entrants for s in schedule}
    _print_match(_analysed(league, match, samples, seed), f"match {match_id}", as_json, names.get(match_id))


def _from_records(path: Path, match_id: str | None, samples: int, seed: int) -> tuple[Analysis, str]:
    from referee.analysis.estimate import analyse
    from referee.report.records import NoSuchRecord, RecordsError, find_record
    from referee.results.disclosure import HIDDEN_NOTE

    try:
        recorded = find_record(path, match_id)
    except NoSuchRecord as exc:
        raise click.ClickException(str(exc)) from None
    except RecordsError as exc:
        raise InputError(str(exc)) from None
    if not recorded.deals_shown:
        raise click.ClickException(f"match {recorded.match_id} of {path}: {HIDDEN_NOTE}, so is its analysis")
    _check_complete(recorded.status, recorded.match_id)
    return analyse(recorded.record, samples, seed), f"{path} ({recorded.match_id})"


def _check_complete(status: MatchStatus, match_id: str) -> None:
    from referee.match.outcome import MatchStatus

    if status is not MatchStatus.COMPLETE:
        raise click.ClickException(f"match {match_id} is {status}: only a complete match is analysed")


def _analysed(league: League, match: StoredMatch, samples: int, seed: int) -> Analysis:
    """The kept analysis of ``match`` at these settings, else a new one, kept."""
    from referee.analysis import storage
    from referee.analysis.estimate import analyse

    kept = storage.kept(league.database, match, samples, seed)
    if kept is not None:
        return kept
    analysis = analyse(match.record, samples, seed)
    try:
        storage.save(league.database, match.match_id, analysis)
    except OSError as exc:
        click.echo(f"the analysis was not kept for the report: {exc}", err=True)
    return analysis


def _analyse_all(read: _LeagueResults, samples: int, seed: int, report_dir: Path | None) -> None:
    """Every shown, complete match without a kept analysis, one line each on stderr, at the lowest CPU
    priority (the matches of a run beside it come first); with ``report_dir``, the report rewritten
    after each."""
    from referee.analysis import storage

    with contextlib.suppress(OSError):
        os.nice(19)
    due = storage.due(read.league.database, read.schedule, read.stored)
    click.echo(
        f"{len(due.matches)} matches to analyse ({due.hidden} more wait until their tables are complete)",
        err=True,
    )
    for number, match in enumerate(due.matches, start=1):
        start = time.monotonic()
        _analysed(read.league, match, samples, seed)
        click.echo(
            f"analysed {number} of {len(due.matches)}: {match.match_id} in {time.monotonic() - start:.1f} s",
            err=True,
        )
        if report_dir is not None:
            _rewrite_report(read, report_dir)


def _rewrite_report(read: _LeagueResults, folder: Path) -> None:
    """The report of the league's results as stored now (a run may be adding to them), with every
    analysis kept so far."""
    from referee.report.site import rewrite_report
    from referee.results.errors import StoreError
    from referee.results.store import Store

    try:
        store = Store(read.league.database, write=False)
        try:
            rewrite_report(read.league, read.seed, folder, store)
        finally:
            store.close()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    except OSError as exc:
        raise click.ClickException(f"{folder}: the report cannot be written: {exc.strerror or exc}") from None


def _print_summary(read: _LeagueResults, as_json: bool) -> None:
    from referee.analysis import storage
    from referee.analysis.text import summary_lines

    league = read.league
    found = storage.kept_summary(league.database, read.schedule, read.stored)
    if as_json:
        data: dict[str, Any] = {
            "league": league.name,
            "analysed": found.analysed,
            "shown": found.shown,
            "entrants": [s.to_dict() for s in found.entrants],
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(f"{league.name}: {found.analysed} of {found.shown} shown complete matches analysed")
    if found.entrants:
        click.echo("\n".join(summary_lines(found.entrants)))


def _print_match(
    analysis: Analysis, what: str, as_json: bool, entrants: tuple[str, ...] | None = None
) -> None:
    """The analysis of one match; per seat, or per entrant where the schedule names them."""
    from referee.analysis.summary import summarise
    from referee.analysis.text import deal_lines, header, summary_lines, worst_lines

    names = entrants if entrants is not None else tuple(f"{s}={n}" for s, n in enumerate(analysis.seats))
    summaries = summarise([(analysis, names)])
    if as_json:
        data = {"match": what, **analysis.to_dict(), "summary": [s.to_dict() for s in summaries]}
        click.echo(json.dumps(data, indent=1, ensure_ascii=False))
        return
    lines = header(analysis, what) + deal_lines(analysis) + worst_lines(analysis.decisions, analysis.seats)
    lines += summary_lines(summaries, "seat" if entrants is None else "entrant")
    click.echo("\n".join(lines))
