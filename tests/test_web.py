"""The parts of ``referee serve`` that need no process: the live feed's bounds, the public view of a
match in play, the app's safety (headers, hosts, escaping) and its API before a league is read."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import click
import pytest
from starlette.testclient import TestClient

from pyramid_sdk import Match, Phase, Rules
from pyramid_sdk.actions import Play
from pyramid_sdk.rules import Talk
from referee.cli.serve import parse_http
from referee.match.runner import LocalSeat, play_match
from referee.web.app import create_app
from referee.web.events import QUEUE, Hub
from referee.web.human import Tables
from referee.web.live import LiveMatch, public_view, watched
from referee.web.runner import LeagueRunner
from sample_bots.random_bot import RandomBot


def test_a_listener_that_does_not_read_is_dropped_and_never_blocks_the_publisher():
    async def scenario() -> tuple[list[str], int, int]:
        hub = Hub()
        slow = hub.stream(keepalive=60)
        assert await anext(slow) == "retry: 2000\n\n"  # registered, then never read again
        reader = hub.stream(keepalive=60)
        await anext(reader)
        seen = []
        for number in range(QUEUE * 3):
            hub.publish("play", n=number)  # never awaits: a full queue drops its listener
            seen.append(await anext(reader))
        return seen, hub.dropped, hub.listeners

    seen, dropped, listeners = asyncio.run(scenario())
    assert dropped == 1
    assert listeners == 1
    assert len(seen) == QUEUE * 3
    assert json.loads(seen[-1].split("data: ")[1]) == {"n": QUEUE * 3 - 1}


def test_closing_the_hub_ends_every_stream():
    async def scenario() -> list[str]:
        hub = Hub()
        stream = hub.stream(keepalive=60)
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
    played: set[str] = set()
    while match.phase is not Phase.MATCH_OVER:
        if match.phase is Phase.DEAL_OVER:
            match.next_deal()
            played = set()
            continue
        for seat in range(3):
            view = public_view(match.observation(seat))
            assert _cards(view) == played  # every card played in the deal so far, and no other
            assert "hand" not in view
        action = rng.choice(match.legal_actions())
        if isinstance(action, Play):
            played.add(action.card.code)
            action = (
                Play(action.card, talk="<b>hi</b>")
                if match.observation(match.to_act).declarer != match.to_act
                else action
            )
        try:
            match.apply(action)
        except ValueError:
            match.apply(Play(action.card) if isinstance(action, Play) else action)
    spoken = any(public_view(match.observation(s))["talk"] for s in range(3))
    assert spoken is (talk is Talk.OPEN)  # the declarer does not hear defenders' talk: not shown


def test_a_watched_match_is_followed_and_hides_its_cards_while_its_table_is_pending():
    async def scenario(shown: bool) -> tuple[LiveMatch, list[dict]]:
        live = LiveMatch("m", ("a", "b"), shown)
        states: list[dict] = []
        live.listeners.append(lambda match: states.append(match.state()))
        seats = watched([LocalSeat(RandomBot(), "a"), LocalSeat(RandomBot(), "b")], live)
        outcome = await play_match(seats, Rules(players=2), 9)
        assert outcome.record.complete
        return live, states

    live, states = asyncio.run(scenario(True))
    assert live.steps > 200
    assert states[-1]["view"]["deal"] == 32
    _, hidden = asyncio.run(scenario(False))
    assert hidden
    assert all("view" not in state for state in hidden)


def test_a_match_in_play_names_its_remote_seats():
    live = LiveMatch("r1:far,near", ("far", "near"), True, 3, remote=("far", "elsewhere"))
    assert live.summary()["remote"] == ["far"]  # the league's remote entrants that sit at this table
    assert LiveMatch("m", ("a", "b"), True).summary()["remote"] == []


def _client(tmp_path: Path, hosts: list[str] | None = None) -> TestClient:
    runner = LeagueRunner(tmp_path / "league.yaml", Hub())
    runner.problem = "<script>alert(1)</script> in league.yaml"
    app = create_app(runner, runner.hub, tmp_path, Tables(), hosts or ["127.0.0.1", "testserver"])
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
    client = _client(tmp_path, ["127.0.0.1"])
    assert client.get("/api/v1/live", headers={"host": "attacker.example"}).status_code == 400
    assert client.get("/api/v1/live", headers={"host": "127.0.0.1:8000"}).status_code == 200


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("[::1]:8000", 200),
        ("[::1]", 200),
        ("localhost:8000", 200),
        ("[::2]:8000", 400),
        ("[::1", 400),
        ("", 400),
        ("localhost:8000@evil.example", 400),
        ("localhost:evil.example", 400),
        ("[::1]evil.example", 400),
    ],
)
def test_the_loopback_hosts_are_answered_ipv6_included(tmp_path, host, status):
    """``referee serve --http [::1]:8000`` serves its own pages: the browser names ``[::1]:8000``."""
    client = _client(tmp_path, ["127.0.0.1", "localhost", "[::1]", "::1"])
    assert client.get("/api/v1/live", headers={"host": host}).status_code == status


def test_a_human_move_must_come_as_json(tmp_path):
    client = _client(tmp_path)
    assert client.post("/api/v1/human", data={"opponents": "x"}).status_code in (415, 503)
    assert client.post("/api/v1/human/nothing", json={"action": "QS"}).status_code == 404


def test_the_address_to_serve_on():
    assert parse_http("0.0.0.0:80") == ("0.0.0.0", 80)
    with pytest.raises(click.BadParameter, match="HOST:PORT"):
        parse_http("localhost")
