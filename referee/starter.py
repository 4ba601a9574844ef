"""``referee init DIR``: a league to start from, anywhere, with a working bot in Python and one in Node.js.

The folder needs nothing of a checkout but the Node.js SDK, which has no registry release: the Node bot's
``package.json`` names the checkout's copy (:data:`NODE_SDK`, the one the Node.js sample bot runs on), and
its ``.npmrc`` asks npm to copy it into ``node_modules`` rather than link it, so that the sandbox, which
shows a bot its own folder only, shows the SDK too. The league's build step runs ``npm install`` there.
Where that copy, ``node`` or ``npm`` is missing, the Node bot is written but left out of the league, and
:attr:`Starter.node_problem` says why and how to add it. The sample opponents come with the referee and
are named by module, without a path.

Each bot has a folder of its own, as entrants of a real league do: the sandbox shows a bot its folder,
and a league's results and logs are masked in it.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Final

NODE_SDK: Final = Path(__file__).resolve().parent.parent / "sdk" / "node"
"""The Node.js SDK of the checkout the referee was installed from (``pip install -e``): ``sdk/node``
beside ``referee/`` and ``sample_bots/``, the copy the sandbox shows every bot. Found by its place, as
``sample_bots.node_heuristic`` finds it for the Node.js sample bot: the referee imports no code of the
sample bots."""


class StarterError(ValueError):
    """The folder cannot take a new league; the message is one line."""


@dataclass(frozen=True, slots=True)
class Starter:
    """What :func:`write_starter` wrote."""

    folder: Path
    files: tuple[str, ...]
    """Relative to ``folder``, in the order written."""
    node_problem: str = ""
    """Why the Node bot is not in the league (``""``: it is)."""

    @property
    def league(self) -> Path:
        return self.folder / "league.yaml"


PYTHON_BOT: Final = '''\
"""My Pyramid bot: it plays legal moves with a plain plan. Put your strategy in declare() and play().

Watch it play one match, card by card, from the league's folder:
    referee match "python python-bot/bot.py" sample_bots.heuristic:HeuristicBot \\
        "python -m sample_bots.random_bot" "python -m sample_bots.montecarlo --samples 2" --html match.html
"""

from __future__ import annotations

from pyramid_sdk import Bot, Card, Declare, MatchInfo, Observation, Play, Rank, Suit
from pyramid_sdk.client import run


class MyBot(Bot):
    name = "my-python-bot"
    version = "1"  # what it tells the referee beside its name

    def match_start(self, info: MatchInfo) -> None:
        """Once a match, before its first deal: your seat, the rules, the time control, the match seed
        (seed your randomness from info.seed, and a match with the same --seed replays exactly)."""

    def declare(self, obs: Observation) -> Declare:
        """Called when this seat declares: return one of obs.legal_declarations (every number still
        open in your pyramid, with each trump).

        The strategy goes here. This one expects a trick from each ace and king and names its longest
        suit trump."""
        expected = sum(card.rank >= Rank.KING for card in obs.hand)

        def length(trump: Suit) -> int:
            return sum(card.suit is trump for card in obs.hand)

        return min(obs.legal_declarations, key=lambda d: (abs(d.tricks - expected), -length(d.trump)))

    def play(self, obs: Observation) -> Card | Play:
        """Called for every card this seat plays: return one of obs.legal_cards (any card of the hand),
        or Play(card, talk="...") to say something to the table as a defender.

        The strategy goes here. The declarer scores only for taking exactly his number, so while he
        still needs tricks he plays high and his opponents play high to beat him; once he has them,
        everyone plays low (he ducks, they feed him tricks he does not want)."""
        by_rank = sorted(obs.legal_cards, key=lambda card: card.rank)
        declarer_needs = obs.taken[obs.declarer] < (obs.declared or 0)
        return by_rank[-1] if declarer_needs else by_rank[0]


if __name__ == "__main__":
    run(MyBot())
'''

NODE_BOT: Final = """\
"use strict";
// My Pyramid bot in JavaScript: it plays legal moves with a plain plan. Put your strategy in declare()
// and play(). Its SDK comes with `npm install` in this folder (the league's build step runs it).
const { Bot, main, rank, suit } = require("pyramid-arena-sdk");

class MyBot extends Bot {
  constructor() {
    super();
    this.name = "my-node-bot";
    this.version = "1"; // what it tells the referee beside its name
  }

  // Called when this seat declares: return one of obs.legalDeclarations ({tricks, trump}).
  // The strategy goes here. This one expects a trick from each ace and king (ranks 4 and 5) and names
  // its longest suit trump.
  declare(obs) {
    const expected = obs.hand.filter((card) => rank(card) >= 4).length;
    const length = (trump) => obs.hand.filter((card) => suit(card) === trump).length;
    const cost = (d) => Math.abs(d.tricks - expected) * 10 - length(d.trump);
    return [...obs.legalDeclarations].sort((a, b) => cost(a) - cost(b))[0];
  }

  // Called for every card this seat plays: return a code of obs.legalCards, or {card, talk} to talk as a
  // defender. The strategy goes here. While the declarer still needs tricks everyone plays high (he to
  // take them, his opponents to beat him); once he has them, everyone plays low.
  play(obs) {
    const byRank = [...obs.legalCards].sort((a, b) => rank(a) - rank(b));
    const declarerNeeds = obs.taken[obs.declarer] < obs.declared;
    return declarerNeeds ? byRank[byRank.length - 1] : byRank[0];
  }
}

main(new MyBot());
"""

LEAGUE_HEAD: Final = """\
# A league to start from, written by `referee init`. From this folder:
#   referee run league.yaml
# Every key and its default: docs/LEAGUE.md of Pyramid Arena. Paths here are relative to this file.
name: {name}
seed: 1                     # fixes every deal; leave it out for a secret one
players: 4                  # seats per match, 2-4
schedule:
  format: round-robin       # every combination of `players` entrants is a table
  rounds: 1
  seating: balanced         # each table replays its deals in 12 seatings: the luck of the cards cancels
time_control: {{per_action: 1s, bank: 20s}}
database: results.sqlite
entrants:
  - name: my-python-bot
    command: python bot.py                # its own process, in a sandbox; python is the referee's own
    cwd: python-bot
"""

NODE_ENTRANT: Final = """\
  - name: my-node-bot
    command: node bot.js
    cwd: node-bot
    build: npm install --no-audit --no-fund   # once before a run: the Node.js SDK into node-bot
"""

OPPONENTS: Final = """\
  - name: random
    command: python -m sample_bots.random_bot   # the sample bots come with the referee: no path
  - name: heuristic
    module: sample_bots.heuristic:HeuristicBot  # in-process: trusted and fast
"""

STAND_IN: Final = """\
  - name: montecarlo                    # in the Node bot's seat until it joins (README.md)
    command: python -m sample_bots.montecarlo --samples 2
"""

GITIGNORE: Final = """\
results.sqlite*
results-logs/
report/
match.html
match.jsonl
node-bot/node_modules/
"""

README: Final = """\
# {name}

Written by `referee init`: a league of four, ready to run, with two bots of your own to grow.

| file | what |
|---|---|
| `league.yaml` | your bots against the sample bots `random` and `heuristic`{stand_in}; 12 matches |
| `python-bot/bot.py` | your Python bot: a working start; the strategy goes in `declare()` and `play()` |
| `node-bot/bot.js` | your Node.js bot, the same in JavaScript{node_state} |

`referee` below is the referee you ran `referee init` with: `{referee}`.

```sh
# Watch one match: a line a deal here; every card in match.html (open it in a browser), and the
# record in match.jsonl, which replay shows deal by deal (--deal 3: deal 3 card by card)
referee match "python python-bot/bot.py" sample_bots.heuristic:HeuristicBot \\
    "python -m sample_bots.random_bot" "python -m sample_bots.montecarlo --samples 2" \\
    --html match.html --record match.jsonl
referee replay match.jsonl --deal 3
# Check that a bot is fit for a league (2-, 3- and 4-player matches, latency, faults)
referee check --cwd python-bot -- python bot.py
# Run the league (interrupt and rerun at will: it resumes), then read it
referee run league.yaml
referee leaderboard league.yaml
referee report league.yaml -o report    # an HTML site: open report/index.html
```

Each bot runs as its own process in a sandbox that shows it its own folder, read-only, and a fresh
`/tmp`; every match starts fresh processes. Change `bot.py` or `bot.js` and the next `referee run`
replays that bot's matches (for a change in another file of its folder, set the entry's `version:`).
To add a bot, give it a folder and an entry under `entrants:`.
{node_howto}"""

NODE_HOWTO: Final = """
## Adding the Node.js bot

It is not in the league yet: {problem}. Once Node.js 18 or later and npm are installed, install its
SDK from a checkout of Pyramid Arena (`sdk/node`; `install-links` in `node-bot/.npmrc` makes npm copy it,
so that the sandbox shows it to the bot) and put it in the league in the place of `montecarlo`:

```sh
cd node-bot && npm install /path/to/pyramid-arena/sdk/node
```

```yaml
  - name: my-node-bot
    command: node bot.js
    cwd: node-bot
    build: npm install --no-audit --no-fund
```
"""


def node_problem(sdk: Path = NODE_SDK) -> str:
    """Why the Node bot cannot join a new league here, or ``""``."""
    if not (sdk / "package.json").is_file():
        return f"no Node.js SDK beside this referee (no {sdk}; a checkout installed with pip install -e has)"
    missing = [program for program in ("node", "npm") if shutil.which(program) is None]
    if missing:
        return f"{' and '.join(missing)} not found on PATH"
    return ""


def _package_json(sdk: Path | None) -> str:
    package: dict[str, object] = {
        "name": "my-node-bot",
        "version": "1.0.0",
        "private": True,
        "description": "A Pyramid Arena bot",
        "main": "bot.js",
    }
    if sdk is not None:
        package["dependencies"] = {"pyramid-arena-sdk": f"file:{sdk}"}
    return json.dumps(package, indent=2) + "\n"


def write_starter(folder: Path, name: str, referee: str, sdk: Path = NODE_SDK) -> Starter:
    """Writes a new league into ``folder``, which must be new or empty: nothing is ever overwritten."""
    if folder.exists() and not folder.is_dir():
        raise StarterError(f"{folder}: not a folder; referee init writes a league into a new or empty folder")
    if folder.is_dir() and any(folder.iterdir()):
        raise StarterError(
            f"{folder}: not empty; referee init writes a league into a new or empty folder, and never "
            "overwrites a file"
        )
    problem = node_problem(sdk)
    ready = not problem
    league = LEAGUE_HEAD.format(name=json.dumps(name, ensure_ascii=False))
    league += (NODE_ENTRANT if ready else "") + OPPONENTS + ("" if ready else STAND_IN)
    readme = README.format(
        name=name,
        stand_in="" if ready else " (and `montecarlo` in the Node bot's place)",
        node_state="" if ready else ", not in the league yet (below)",
        referee=referee,
        node_howto="" if ready else NODE_HOWTO.format(problem=problem),
    )
    files = {
        "league.yaml": league,
        "README.md": readme,
        ".gitignore": GITIGNORE,
        "python-bot/bot.py": PYTHON_BOT,
        "node-bot/bot.js": NODE_BOT,
        "node-bot/package.json": _package_json(sdk if ready else None),
        "node-bot/.npmrc": "install-links=true\n",
    }
    try:
        for relative, text in files.items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as out:  # "x": never over a file that appeared meanwhile
                out.write(text)
    except OSError as exc:
        raise StarterError(f"{exc.filename or folder}: cannot write: {exc.strerror or exc}") from None
    return Starter(folder, tuple(files), problem)
