"""Golden playthroughs: one seeded random match per player count, checked byte for byte.

After an intended change to the rules or the record format, regenerate them with
``python tests/support/playthrough.py`` and review the diff.
"""

import json

import pytest

from pyramid_sdk import Match, MatchRecord
from support.playthrough import golden_lines, golden_path, golden_record


@pytest.mark.parametrize("players", [2, 3, 4])
def test_golden_playthrough(players):
    expected = golden_path(players).read_text(encoding="utf-8")
    actual = "\n".join(golden_lines(golden_record(players))) + "\n"
    assert actual == expected, f"{golden_path(players).name} differs; see the module docstring"


@pytest.mark.parametrize("players", [2, 3, 4])
def test_golden_files_replay_through_the_rules(players):
    lines = golden_path(players).read_text(encoding="utf-8").splitlines()
    header, *deals, result = (json.loads(line) for line in lines)
    record = MatchRecord.from_dict({**header, "deals": deals, **result})
    assert Match.replay(record).record() == record
