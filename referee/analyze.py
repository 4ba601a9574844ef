"""What ``referee analyze`` does, its options parsed in :mod:`referee.cli.analysis`: it reads a match
from a league's results or a records file, refuses a table whose deals are still hidden, and prints and
keeps the analysis. Errors are one line; nothing it did not write is touched."""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import click

from referee.analysis import storage
from referee.analysis.estimate import Analysis, analyse
from referee.analysis.summary import Summary, summarise
from referee.analysis.text import deal_lines, header, summary_lines, worst_lines
from referee.league.config import League, LeagueError, load_league
from referee.league.planning import schedule_of
from referee.league.ratings import rate
from referee.league.schedule import ScheduledMatch
from referee.match.outcome import MatchStatus
from referee.report.records import NoSuchRecord, RecordsError, find_record
from referee.report.site import write_report
from referee.results.disclosure import HIDDEN_NOTE, disclosure
from referee.results.errors import StoreError
from referee.results.owner import made_by
from referee.results.reading import open_results
from referee.results.store import StoredMatch


class _InputError(click.ClickException):
    """A league file or records file that cannot be read: exit code 2, as every command's."""

    exit_code = 2


def analyze(
    source: str,
    match_id: str | None,
    samples: int,
    seed: int,
    every: bool,
    summary: bool,
    report_dir: Path | None,
    as_json: bool,
) -> None:
    """``referee analyze`` with its options parsed (:func:`referee.cli.analysis.analyze_command`, whose help
    says what each does): one match, ``--all`` the league's unanalysed shown matches, or ``--summary``."""
    if report_dir is not None and not every:
        raise click.UsageError("--report goes with --all: the report is rewritten as matches are analysed")
    if source.endswith(".jsonl"):
        if every or summary:
            raise click.UsageError("--all and --summary read a league's results, not a records file")
        analysis, what = _from_records(Path(source), match_id, samples, seed)
        _print_match(analysis, what, as_json)
        return
    league, schedule, stored = _league_results(source)
    shown = disclosure(schedule, stored)
    names = {s.match_id: s.entrants for s in schedule}
    if summary or every:
        if match_id is not None:
            raise click.UsageError("give a MATCH_ID, or --all / --summary for the whole league, not both")
        if every:
            _analyse_all(league, schedule, stored, samples, seed, report_dir)
        _print_summary(league, schedule, stored, as_json)
        return
    if match_id is None:
        raise click.UsageError(
            f"which match of {source}? give its id or schedule position, or --all, or --summary"
        )
    if match_id.isdigit() and 1 <= int(match_id) <= len(schedule):
        match_id = schedule[int(match_id) - 1].match_id
    match = stored.get(match_id)
    if match is None:
        raise click.ClickException(
            f"no stored match {match_id!r} in {league.database}; `referee matches {source}` lists them"
        )
    if not shown.deals_shown(match):
        raise click.ClickException(
            f"match {match_id} of {league.database}: {HIDDEN_NOTE}, so is its analysis"
        )
    _check_complete(match.status, match_id)
    analysis = _analysed(league, match, samples, seed)
    _print_match(analysis, f"match {match_id}", as_json, names.get(match_id))


def _from_records(path: Path, match_id: str | None, samples: int, seed: int) -> tuple[Analysis, str]:
    try:
        recorded = find_record(path, match_id)
    except NoSuchRecord as exc:
        raise click.ClickException(str(exc)) from None
    except RecordsError as exc:
        raise _InputError(str(exc)) from None
    if not recorded.deals_shown:
        raise click.ClickException(f"match {recorded.match_id} of {path}: {HIDDEN_NOTE}, so is its analysis")
    _check_complete(recorded.status, recorded.match_id)
    return analyse(recorded.record, samples, seed), f"{path} ({recorded.match_id})"


def _check_complete(status: MatchStatus, match_id: str) -> None:
    if status is not MatchStatus.COMPLETE:
        raise click.ClickException(f"match {match_id} is {status}: only a complete match is analysed")


def _league_results(source: str) -> tuple[League, list[ScheduledMatch], dict[str, StoredMatch]]:
    """The league, its schedule and its stored matches, read-only; one line if any cannot be read."""
    try:
        league = load_league(source, check_commands=False, made_by=made_by)
    except LeagueError as exc:
        raise _InputError(str(exc)) from None
    try:
        store, league, seed = open_results(league, source)
        try:
            stored = store.matches()
        finally:
            store.close()
    except StoreError as exc:
        raise click.ClickException(str(exc)) from None
    return league, list(schedule_of(league, seed, stored)), stored


def _analysed(league: League, match: StoredMatch, samples: int, seed: int) -> Analysis:
    """The kept analysis of ``match`` at these settings, else a new one, kept."""
    kept = storage.load(league.database, match.match_id, match.record)
    if kept is not None and (kept.samples, kept.seed) == (samples, seed):
        return kept
    analysis = analyse(match.record, samples, seed)
    try:
        storage.save(league.database, match.match_id, analysis)
    except OSError as exc:
        click.echo(f"the analysis was not kept for the report: {exc}", err=True)
    return analysis


def _analyse_all(
    league: League,
    schedule: list[ScheduledMatch],
    stored: dict[str, StoredMatch],
    samples: int,
    seed: int,
    report_dir: Path | None,
) -> None:
    """Every shown, complete match without a kept analysis, one line each on stderr, at the lowest CPU
    priority (the matches of a run beside it come first); with ``report_dir``, the report rewritten
    after each."""
    with contextlib.suppress(OSError):
        os.nice(19)
    shown = disclosure(schedule, stored)
    todo = [
        stored[s.match_id]
        for s in schedule
        if s.match_id in stored
        and stored[s.match_id].status is MatchStatus.COMPLETE
        and shown.deals_shown(stored[s.match_id])
        and storage.load(league.database, s.match_id, stored[s.match_id].record) is None
    ]
    hidden = sum(1 for m in stored.values() if not shown.deals_shown(m))
    click.echo(
        f"{len(todo)} matches to analyse ({hidden} more wait until their tables are complete)", err=True
    )
    for number, match in enumerate(todo, start=1):
        start = time.monotonic()
        _analysed(league, match, samples, seed)
        click.echo(
            f"analysed {number} of {len(todo)}: {match.match_id} in {time.monotonic() - start:.1f} s",
            err=True,
        )
        if report_dir is not None:
            _rewrite_report(league, report_dir)


def _rewrite_report(league: League, folder: Path) -> None:
    """The report of the league's results as stored now (a run may be adding to them), with every
    analysis kept so far."""
    league, schedule, stored = _league_results(str(league.path))
    board = rate([e.name for e in league.entrants], schedule, stored, league.rating)
    try:
        write_report(league, schedule, stored, board, folder)
    except OSError as exc:
        raise click.ClickException(f"{folder}: the report cannot be written: {exc.strerror or exc}") from None


def _entrant_summaries(
    league: League, schedule: list[ScheduledMatch], stored: dict[str, StoredMatch]
) -> tuple[list[Summary], int, int]:
    """Per entrant, over the kept analyses of shown matches; and how many matches those are, of how many
    shown complete matches."""
    shown = disclosure(schedule, stored)
    kept: list[tuple[Analysis, tuple[str, ...]]] = []
    complete = 0
    for scheduled in schedule:
        match = stored.get(scheduled.match_id)
        if match is None or match.status is not MatchStatus.COMPLETE or not shown.deals_shown(match):
            continue
        complete += 1
        analysis = storage.load(league.database, match.match_id, match.record)
        if analysis is not None:
            kept.append((analysis, scheduled.entrants))
    return summarise(kept), len(kept), complete


def _print_summary(
    league: League, schedule: list[ScheduledMatch], stored: dict[str, StoredMatch], as_json: bool
) -> None:
    summaries, analysed, complete = _entrant_summaries(league, schedule, stored)
    if as_json:
        data: dict[str, Any] = {
            "league": league.name,
            "analysed": analysed,
            "shown": complete,
            "entrants": [s.to_dict() for s in summaries],
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    click.echo(f"{league.name}: {analysed} of {complete} shown complete matches analysed")
    if summaries:
        click.echo("\n".join(summary_lines(summaries)))


def _print_match(
    analysis: Analysis, what: str, as_json: bool, entrants: tuple[str, ...] | None = None
) -> None:
    """The analysis of one match; per seat, or per entrant where the schedule names them."""
    names = entrants if entrants is not None else tuple(f"{s}={n}" for s, n in enumerate(analysis.seats))
    summaries = summarise([(analysis, names)])
    if as_json:
        data = {"match": what, **analysis.to_dict(), "summary": [s.to_dict() for s in summaries]}
        click.echo(json.dumps(data, indent=1, ensure_ascii=False))
        return
    lines = header(analysis, what) + deal_lines(analysis) + worst_lines(analysis.decisions, analysis.seats)
    lines += summary_lines(summaries, "seat" if entrants is None else "entrant")
    click.echo("\n".join(lines))
