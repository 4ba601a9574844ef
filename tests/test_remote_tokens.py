"""Remote entrants' tokens and settings, without any process (issue #26): only salted hashes are kept,
reissuing revokes, expiry; the league file's ``remote: true`` and ``remote:`` keys; the door's rules for
plaintext."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from referee.league.config import LeagueError, load_league
from referee.remote.door import MAX_BAD_HELLOS, Door, Doorman
from referee.remote.lobby import Lobby
from referee.remote.settings import RemoteSettings, RemoteSettingsError
from referee.remote.tokens import TokenBook, TokenError


def test_a_token_is_shown_once_and_only_its_salted_hash_is_kept(tmp_path):
    book = TokenBook(tmp_path / "league-tokens.json")
    token = book.issue("far")
    text = book.path.read_text()
    assert token not in text
    assert token.startswith("pyr1_")
    assert len(token) > 40
    assert stat.S_IMODE(book.path.stat().st_mode) == 0o600
    assert book.holder(token) == "far"
    assert book.holder(token + "x") is None
    assert book.holder("") is None
    other = book.issue("near")
    assert book.grants()["far"].salt != book.grants()["near"].salt  # salted: equal tokens hash apart
    assert book.holder(other) == "near"


def test_reissuing_revokes_the_old_token_and_revoke_forgets_it(tmp_path):
    book = TokenBook(tmp_path / "t.json")
    old = book.issue("far")
    new = book.issue("far")
    assert book.holder(old) is None
    assert book.holder(new) == "far"
    assert book.revoke("far") is True
    assert book.holder(new) is None
    assert book.revoke("far") is False


def test_an_expired_token_admits_nobody(tmp_path):
    book = TokenBook(tmp_path / "t.json")
    token = book.issue("far", lifetime=60)
    assert book.holder(token) == "far"
    assert book.holder(token, now=time.time() + 61) is None


def test_a_damaged_token_file_is_one_clear_error(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("{not json")
    with pytest.raises(TokenError, match="cannot read the token file"):
        TokenBook(path).grants()


def _league(folder: Path, entrant: str, extra: str = "") -> Path:
    path = folder / "league.yaml"
    path.write_text(
        f"name: L\nplayers: 2\n{extra}entrants:\n  - name: a\n    module: sample_bots.random_bot:RandomBot\n"
        f"  - name: far\n{entrant}"
    )
    return path


def test_a_remote_entrant_in_the_league_file(tmp_path):
    league = load_league(
        _league(tmp_path, "    remote: true\n", "remote: {listen: '127.0.0.1:7443', wait: 90s}\n")
    )
    far = league.entrant("far")
    assert far.spec.remote
    assert not far.in_process
    assert far.spec.command == ()
    assert league.remote.listen == "127.0.0.1:7443"
    assert league.remote.wait == 90
    assert league.remote.max_matches == 1  # one match at a time unless the organiser says more
    with pytest.raises(LeagueError, match=r"give exactly one of command:, module: or remote: true"):
        load_league(_league(tmp_path, "    remote: true\n    command: python x.py\n"))


def test_the_league_caps_how_many_matches_a_remote_entrant_plays_at_once(tmp_path):
    league = load_league(_league(tmp_path, "    remote: true\n", "remote: {max_matches: 8}\n"))
    assert league.remote.max_matches == 8
    for bad, said in (("0", "greater than or equal to 1"), ("1000000000", "less than or equal to 64")):
        with pytest.raises(LeagueError) as refused:
            load_league(_league(tmp_path, "    remote: true\n", f"remote: {{max_matches: {bad}}}\n"))
        assert f"league.yaml:3: remote.max_matches: Input should be {said}" in str(refused.value)
        assert "\n" not in str(refused.value)


def test_plaintext_is_refused_off_loopback_unless_the_organiser_insists(tmp_path):
    RemoteSettings("127.0.0.1:7443").check()
    RemoteSettings("[::1]:7443").check()
    RemoteSettings("0.0.0.0:7443", insecure=True).check()
    with pytest.raises(RemoteSettingsError, match="not a loopback address and has no TLS"):
        RemoteSettings("10.0.0.5:7443").check()
    with pytest.raises(RemoteSettingsError, match="give both --tls-cert and --tls-key"):
        RemoteSettings("0.0.0.0:7443", tls_cert=tmp_path / "c.pem").check()
    with pytest.raises(RemoteSettingsError, match="HOST:PORT"):
        RemoteSettings("7443").check()


def test_bad_hellos_from_one_address_shut_it_out_for_a_while_and_not_others():
    doorman = Doorman()
    for n in range(MAX_BAD_HELLOS):
        assert doorman.shut_out("10.0.0.9", 100.0 + n) == 0
        doorman.refused("10.0.0.9", 100.0 + n)
    assert doorman.shut_out("10.0.0.9", 105.0) > 0
    assert doorman.shut_out("10.0.0.8", 105.0) == 0
    assert doorman.shut_out("10.0.0.9", 100.0 + 61) == 0  # the window has passed
    assert doorman.shut_out("10.0.0.9", 400.0) == 0
    assert doorman.bad == {}  # a door open for days forgets the addresses it no longer limits


def test_a_damaged_token_file_admits_nobody_and_raises_nothing_into_the_lobby(tmp_path):
    """The lobby asks the door whether a session's token is still good at every hand-out: a damaged
    token file must answer no (and be logged), not raise through a claim and stop referee serve."""
    book = TokenBook(tmp_path / "tokens.json")
    book.issue("far")
    door = Door(book, ["far"], Lobby(1.0))
    (tmp_path / "tokens.json").write_text("{ damaged", encoding="utf-8")
    with pytest.raises(TokenError):
        book.grants()
    assert door.still_valid("far", object()) is False  # type: ignore[arg-type]
    assert door.still_valid("gone", object()) is False  # type: ignore[arg-type]
