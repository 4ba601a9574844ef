"""The parts of ``referee serve`` that need no process: the live feed's bounds, the public view of a
match in play, the app's safety (headers, hosts, escaping) and its API before a league is read."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path

import click
import pytest
from starlette.testclient import TestClient

from pyramid_sdk import Match, Rules
from pyramid_sdk.actions import Action, Play
from pyramid_sdk.rules import Talk
from referee.cli.serve import parse_http
from referee.match.playing import LocalSeat, play_match
from referee.match.watch import TELL_EVERY, LiveMatch, public_view, watched
from referee.run.serve_driver import ServeDriver
from referee.web.app import create_app
from referee.web.events import QUEUE, Hub, ListenerRefused
from referee.web.hosts import Hosts, allowed, public_host
from referee.web.human import HumanMatches
from referee.web.readers import Answers, Readers
from referee.web.site import LiveSite
from sample_bots.random_bot import RandomBot


def test_a_listener_that_does_not_read_is_dropped_cut_and_never_blocks_the_publisher():
    async def scenario() -> tuple[list[bytes], int, int, list[str]]:
        hub = Hub(every=0)  # a send per loop turn: one event each here
        cut: list[str] = []
        slow = hub.listen("127.0.0.2", lambda: cut.append("slow")).chunks(keepalive=60)
        assert await anext(slow) == b"retry: 2000\n\n"  # registered, then never read again
        reader = hub.listen("127.0.0.3", lambda: cut.append("reader")).chunks(keepalive=60)
        await anext(reader)
        seen = []
        for number in range(QUEUE * 3):
            hub.publish("play", n=number)  # never awaits: a full queue drops its listener
            seen.append(await anext(reader))
        assert [chunk async for chunk in slow] == []  # its stream ends at once
        return seen, hub.dropped, hub.listeners, cut

    seen, dropped, listeners, cut = asyncio.run(scenario())
    assert dropped == 1
    assert cut == ["slow"]  # its connection is cut when it is dropped, not when it next reads
    assert listeners == 1
    assert len(seen) == QUEUE * 3
    assert json.loads(seen[-1].decode().split("data: ")[1]) == {"n": QUEUE * 3 - 1}


def test_what_is_published_within_a_send_interval_reaches_a_listener_as_one_chunk_in_order():
    async def scenario() -> tuple[list[bytes], float]:
        hub = Hub(every=0.05)
        stream = hub.listen("127.0.0.2").chunks(keepalive=60)
        await anext(stream)
        began = asyncio.get_running_loop().time()
        for number in range(100):  # a burst, as a fast league's matches publish
            hub.publish("match_finished", n=number)
        first = await anext(stream)
        took = asyncio.get_running_loop().time() - began
        hub.publish("pages", n=100)
        return [first, await anext(stream)], took

    (burst, later), took = asyncio.run(scenario())
    events = [json.loads(part.split("data: ")[1]) for part in burst.decode().split("\n\n") if part]
    assert events == [{"n": n} for n in range(100)]  # all of them, in order, in one send
    assert 0.04 <= took < 1
    assert json.loads(later.decode().split("data: ")[1]) == {"n": 100}


def test_listeners_are_capped_per_address_and_in_all():
    async def scenario() -> list[int]:
        hub = Hub(per_address=2, most=3)
        statuses = []
        for address in ("a", "a", "a", "b", "c"):
            try:
                hub.listen(address)
                statuses.append(200)
            except ListenerRefused as refused:
                statuses.append(refused.status)
        return statuses

    assert asyncio.run(scenario()) == [200, 200, 429, 200, 503]


def test_closing_the_hub_ends_every_stream():
    async def scenario() -> list[bytes]:
        hub = Hub()
        stream = hub.listen().chunks(keepalive=60)
        await anext(stream)
        hub.close()
        return [chunk async for chunk in stream]

    assert asyncio.run(scenario()) == []


def _cards(view: dict) -> set[str]:
    tricks = [*view["tricks"], view["current_trick"]]
    return {card for trick in tricks for card in trick["cards"]}


@pytest.mark.parametrize("talk", [Talk.OPEN, Talk.DEFENDERS])
def test_the_public_view_holds_only_cards_on_the_table(talk):
    match = Match(Rules(players=3, talk=talk), 4)
    rng = random.Random(4)
    played: dict[int, set[str]] = {}  # per deal, the cards played in it so far

    def look_then_choose(match: Match, seat: int) -> Action:
        so_far = played.setdefault(match.deal_number, set())
        hands = [match.observation(s).hand for s in range(3)]  # each seat's own look at its cards
        for watcher in range(3):
            view = public_view(match.observation(watcher))
            assert _cards(view) == so_far  # every card played in the deal so far, and no other
            assert not _cards(view) & {card.code for hand in hands for card in hand}  # none still held
            assert "hand" not in view
            assert view["cards_left"] == [len(hand) for hand in hands]  # how many, as each seat sees
        action = rng.choice(match.legal_actions())
        if isinstance(action, Play):
            so_far.add(action.card.code)
            if seat != match.declarer:  # a defender talks with every card
                return Play(action.card, talk="<b>hi</b>")
        return action

    match.play_out(look_then_choose)
    spoken = any(public_view(match.observation(s))["talk"] for s in range(3))
    assert spoken is (talk is Talk.OPEN)  # the declarer does not hear defenders' talk: not shown


def test_a_watched_match_is_followed_and_hides_its_cards_while_its_table_is_pending():
    async def scenario(shown: bool) -> tuple[LiveMatch, list[dict]]:
        live = LiveMatch("m", ("a", "b"), shown)
        states: list[dict] = []
        live.listeners.append(lambda match: states.append(match.state()))
        seats = watched([LocalSeat(RandomBot(), "a"), LocalSeat(RandomBot(), "b")], live)
        began = time.monotonic()
        outcome = await play_match(seats, Rules(players=2), 9)
        live.close()  # the last state, told before the match's end is
        # Told at most every TELL_EVERY however fast the bots, and at once after a quiet spell.
        assert len(states) <= 2 + (time.monotonic() - began) / TELL_EVERY
        assert outcome.record.complete
        return live, states

    live, states = asyncio.run(scenario(True))
    assert live.steps > 200
    assert states[-1]["view"]["deal"] == 32
    assert states[-1]["view"]["phase"] == "match-over"
    clocks = [state["view"]["clocks"] for state in states]
    assert clocks[0]["banks"].count(None) == 1  # the second seat not asked yet when the first decides
    assert all(None not in c["banks"] and c["per_action"] > 0 for c in clocks[2:])  # each seat's bank
    _, hidden = asyncio.run(scenario(False))
    assert hidden
    assert all("view" not in state for state in hidden)


def test_a_match_in_play_names_its_remote_seats():
    live = LiveMatch("r1:far,near", ("far", "near"), True, 3, remote=("far", "elsewhere"))
    assert live.summary()["remote"] == ["far"]  # the league's remote entrants that sit at this table
    assert LiveMatch("m", ("a", "b"), True).summary()["remote"] == []


def test_a_match_on_a_worker_shows_the_view_its_worker_relays_and_only_once_its_deals_may_be_shown():
    """``referee serve --workers``: the server's copy of a match a worker plays is fed by the worker's
    relays; the server's own disclosure rule still decides whether the view is shown."""
    told = []
    shown = LiveMatch("m", ("a", "b"), True, 1, on_worker=True)
    shown.listeners.append(lambda match: told.append(match.state()))
    view = {"deal": 2, "tricks": []}
    shown.relay(2, view)
    assert shown.summary()["on_worker"] is True
    assert shown.summary()["deal"] == 2
    assert shown.state()["view"] == view
    shown.relay(2, view)  # the same again: nobody is told twice
    assert [state["view"] for state in told] == [view]
    hidden = LiveMatch("n", ("a", "b"), False, 2, on_worker=True)
    hidden.relay(3, view)
    assert hidden.summary()["deal"] == 3
    assert "view" not in hidden.state()


def _client(tmp_path: Path, hosts: Hosts | None = None) -> TestClient:
    driver = ServeDriver(tmp_path / "league.yaml", Hub())
    driver.problem = "<script>alert(1)</script> in league.yaml"
    readers = Readers(processes=0)  # no league is read: nothing to read
    site = LiveSite(driver.hub)
    hosts = hosts or Hosts(frozenset({"127.0.0.1", "testserver"}))
    app = create_app(driver, driver.hub, site, Answers(readers), HumanMatches(), hosts)
    return TestClient(app)


def test_every_answer_carries_the_safety_headers_and_bot_text_is_escaped(tmp_path):
    client = _client(tmp_path)
    answer = client.get("/")
    assert answer.status_code == 503  # no league read yet: a page that says so
    assert "script-src 'self'" in answer.headers["content-security-policy"]
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert "<script>alert(1)</script>" not in answer.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in answer.text
    assert client.get("/api/v1/leaderboard").status_code == 503
    assert client.get("/api/v1/live").json() == {"version": 1, "in_play": []}
    assert client.get("/../../etc/passwd").status_code == 404
    assert client.get("/.hidden.html").status_code == 404


def test_a_request_for_another_host_is_refused(tmp_path):
    client = _client(tmp_path, allowed("127.0.0.1"))
    assert client.get("/api/v1/live", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/api/v1/live", headers={"host": "127.0.0.1:8000"}).status_code == 200


@pytest.mark.parametrize(
    ("bind", "host", "status"),
    [
        ("::1", "[::1]:8000", 200),
        ("::1", "[::1]", 200),
        ("::1", "localhost:8000", 200),
        ("localhost", "[::1]:8000", 200),
        ("localhost", "127.0.0.1:8000", 200),
        ("127.0.0.1", "localhost:8000", 200),
        ("::1", "[::2]:8000", 400),
        ("::1", "[::1", 400),
        ("::1", "", 400),
        ("localhost", "localhost:8000@evil.example", 400),
        ("localhost", "localhost:evil.example", 400),
        ("::1", "[::1]evil.example", 400),
        ("127.0.0.2", "127.0.0.2:8000", 200),
        ("127.0.0.2", "evil.example", 400),
        ("127.0.0.2", "localhost:8000", 400),  # localhost is 127.0.0.1, not this server
        ("127.0.0.2", "127.0.0.1:8000", 400),
        ("10.0.0.5", "10.0.0.5:8000", 200),
        ("10.0.0.5", "evil.example:8000", 400),
        ("0.0.0.0", "192.168.1.20:8000", 200),  # an address of the machine's: not a name to rebind
        ("0.0.0.0", "[2001:db8::1]:8000", 200),
        ("0.0.0.0", "evil.example", 400),
        ("0.0.0.0", "localhost:8000", 200),
    ],
)
def test_the_hosts_a_request_may_name_follow_the_bound_address(tmp_path, bind, host, status):
    """Bound to a loopback address, only that address (and localhost for 127.0.0.1 and ::1); bound to
    another, only it; bound to every address, any address literal: never a name of someone else's."""
    client = _client(tmp_path, allowed(bind))
    assert client.get("/api/v1/live", headers={"host": host}).status_code == status


def test_public_host_names_are_answered_and_only_they(tmp_path):
    client = _client(tmp_path, allowed("10.0.0.5", ["arena.example.org", "Arena2.example.org"]))
    assert client.get("/api/v1/live", headers={"host": "arena.example.org"}).status_code == 200
    assert client.get("/api/v1/live", headers={"host": "ARENA2.example.org:443"}).status_code == 200
    assert client.get("/api/v1/live", headers={"host": "10.0.0.5"}).status_code == 200
    assert client.get("/api/v1/live", headers={"host": "evil.example"}).status_code == 400
    for bad in ("*", "arena.example.org:80", "http://arena", "*.example.org", ""):
        with pytest.raises(ValueError, match="expected a host name"):
            public_host(bad)


def test_a_page_name_too_long_for_a_file_is_not_found(tmp_path):
    client = _client(tmp_path)
    assert client.get("/" + "a" * 300 + ".html").status_code == 404


def test_a_human_move_must_come_as_json(tmp_path):
    client = _client(tmp_path)
    assert client.post("/api/v1/human", data={"opponents": "x"}).status_code in (415, 503)
    assert client.post("/api/v1/human/nothing", json={"action": "QS"}).status_code == 404


def test_the_address_to_serve_on():
    assert parse_http("0.0.0.0:80") == ("0.0.0.0", 80)
    with pytest.raises(click.BadParameter, match="HOST:PORT"):
        parse_http("localhost")
