"""Entry by the author without a server (issue #35): invite codes as salted hashes, spent once, expired,
given back; the entry's rules for names; what a league in play may take in without a new pass
(:func:`remote_newcomers`) and the competition grown by a newcomer on a real SQLite database, the others'
tables, seeds and disqualifications untouched; a remote entrant added to a league file with its comments."""

from __future__ import annotations

import asyncio
import stat

import pytest

from referee.league.changes import remote_newcomers
from referee.league.config import LeagueError, add_remote_entrant, load_league
from referee.remote.invites import InviteBook, Refusal, Refused
from referee.remote.tokens import TokenBook
from referee.run.competition import Competition
from referee.run.entry import Entry, EntryMode, Why, check_name
from referee.run.entry import Refused as EntryRefused
from support.leagues import MODULE_BOTS, remote_entrants, write_league


def league_text(remote: list[str]) -> str:
    return (
        "# kept\nname: Grows\nseed: 3\nplayers: 2\nschedule: {format: round-robin, seating: balanced}\n"
        f"database: results.sqlite\nentrants:\n{MODULE_BOTS}{remote_entrants(remote)}"
    )


def test_an_invite_is_shown_once_kept_as_a_salted_hash_and_spent_once(tmp_path):
    book = InviteBook(tmp_path / "league-invites.json")
    key, code = book.issue(uses=2)
    other_key, other = book.issue()
    text = book.path.read_text()
    assert code not in text
    assert other not in text
    assert code.startswith("pyi1_")
    assert stat.S_IMODE(book.path.stat().st_mode) == 0o600
    invites = book.invites()
    assert invites[key].salt != invites[other_key].salt
    assert book.take(code) == key
    assert book.take(code) == key
    with pytest.raises(Refused) as spent:
        book.take(code)
    assert spent.value.refusal is Refusal.EXHAUSTED
    book.give_back(key)  # an entry that failed after taking its use
    assert book.invites()[key].left == 1
    with pytest.raises(Refused) as unknown:
        book.take(code + "x")
    assert unknown.value.refusal is Refusal.UNKNOWN
    assert book.revoke(other_key)
    with pytest.raises(Refused) as revoked:
        book.take(other)
    assert revoked.value.refusal is Refusal.UNKNOWN
    assert not book.revoke(other_key)


def test_an_expired_invite_admits_nobody_and_is_not_spent(tmp_path):
    book = InviteBook(tmp_path / "i.json")
    key, code = book.issue(lifetime=60)
    issued = book.invites()[key].issued
    with pytest.raises(Refused) as expired:
        book.take(code, now=issued + 61)
    assert expired.value.refusal is Refusal.EXPIRED
    assert book.invites()[key].used == 0


def test_a_token_is_rotated_only_with_the_current_one(tmp_path):
    book = TokenBook(tmp_path / "t.json")
    old = book.issue("far", lifetime=3600)
    expires = book.grants()["far"].expires
    assert book.rotate("near", old) is None
    assert book.rotate("far", old + "x") is None
    new = book.rotate("far", old)
    assert new is not None
    assert book.holder(old) is None
    assert book.holder(new) == "far"
    assert book.grants()["far"].expires == expires  # a rotation never lengthens a token's life
    assert book.rotate("far", old) is None


@pytest.mark.parametrize(
    "name", ["", "-x", "<b>", "a" * 65, "ma\u0142lory", "x y", "referee", "REFEREE", "x\n", 7, None]
)
def test_a_name_an_author_may_not_enter_under_is_refused(name):
    with pytest.raises(EntryRefused) as refused:
        check_name(name)
    assert refused.value.why is Why.INVALID


def test_only_remote_entrants_added_are_taken_in_as_the_league_plays(tmp_path):
    path = write_league(tmp_path, league_text(["far"]))
    before = load_league(path)
    assert remote_newcomers(before, before) == ()
    path.write_text(league_text(["far", "near", "nearer"]))
    assert remote_newcomers(before, load_league(path)) == ("near", "nearer")
    for changed in (
        league_text([]),  # an entrant removed
        league_text(["far"]).replace("seed: 3", "seed: 4"),  # a setting
        league_text(["far"])
        + "  - name: local\n    module: sample_bots.random_bot:RandomBot\n",  # not remote
        league_text(["far"]).replace("RandomBot", "RandomBot\n    version: '2'"),  # a new version
    ):
        path.write_text(changed)
        assert remote_newcomers(before, load_league(path)) is None, changed


def test_a_grown_competition_keeps_every_table_and_the_others_disqualifications(tmp_path):
    path = write_league(tmp_path, league_text(["far"]))
    competition = Competition.open(load_league(path), skip_broken=True)
    try:
        before = {m.match_id: m.seed for m in competition.schedule}
        competition.disqualify("far", "no token")
        path.write_text(league_text(["far", "near"]))
        competition.grow(load_league(path))
        after = {m.match_id: m.seed for m in competition.schedule}
        assert {k: v for k, v in after.items() if k in before} == before
        new = set(after) - set(before)
        assert new
        assert all("near" in match_id for match_id in new)
        assert len(new) == 3 * 2  # a table with each of the three others, in both seatings
        assert competition.progress.total == len(after)
        assert competition.disqualified == {"far": "no token"}
        assert "near" in competition.league.remote_names
        competition.reinstate("far")
        assert competition.disqualified == {}
    finally:
        competition.close()


def test_a_remote_entrant_is_added_with_the_comments_kept_and_a_name_once(tmp_path):
    path = write_league(tmp_path, league_text([]))
    add_remote_entrant(path, "alice-net")
    text = path.read_text()
    assert text.startswith("# kept\n")
    assert "  - name: alice-net\n    remote: true\n" in text
    assert load_league(path).remote_names == ["alice-net"]
    with pytest.raises(LeagueError, match="already named"):
        add_remote_entrant(path, "Alice-Net")
    assert path.read_text() == text
    assert not path.with_name(path.name + ".new").exists()


def test_entry_closed_refuses_and_writes_nothing(tmp_path):
    path = write_league(tmp_path, league_text([]))
    text = path.read_text()
    entry = Entry(path, EntryMode.CLOSED)
    with pytest.raises(EntryRefused) as refused:
        asyncio.run(entry.enter("127.0.0.1", "alice", None))
    assert refused.value.why is Why.CLOSED
    assert path.read_text() == text
    assert not (tmp_path / "results-tokens.json").exists()


def test_open_entry_writes_the_entrant_and_its_token_and_limits_each_address(tmp_path):
    path = write_league(tmp_path, league_text([]))
    clock = [0.0]
    taken: list[int] = []
    entry = Entry(path, EntryMode.OPEN, lambda: taken.append(1), clock=lambda: clock[0])

    async def enter(name: str, address: str = "10.0.0.1") -> str:
        return (await entry.enter(address, name, None)).token

    token = asyncio.run(enter("alice"))
    assert taken == [1]
    assert TokenBook(tmp_path / "results-tokens.json").holder(token) == "alice"
    assert load_league(path).remote_names == ["alice"]
    asyncio.run(enter("bob"))
    asyncio.run(enter("carol"))
    with pytest.raises(EntryRefused) as many:
        asyncio.run(enter("dave"))
    assert many.value.why is Why.TOO_MANY
    assert many.value.retry > 0
    asyncio.run(enter("dave", "10.0.0.2"))  # another address
    clock[0] += 3601
    asyncio.run(enter("erin"))  # an hour later
    assert load_league(path).remote_names == ["alice", "bob", "carol", "dave", "erin"]
