"""`referee match` from the command line: options and the one-line errors a bot author sees."""

from support.cli import referee

RANDOM = "sample_bots.random_bot:RandomBot"


def test_rule_options_reach_the_match_under_either_spelling():
    for option in ("--rule", "--rules"):
        result = referee("match", RANDOM, RANDOM, option, "trick_winner=highest-rank", "--seed", "4")
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr
        assert "1. " in result.stdout  # the final standings


def test_bad_input_is_one_line_naming_what_is_wrong():
    cases = [
        (("match", RANDOM, RANDOM, "--rule", "players=3"), "'players=3': not a rule option"),
        (("match", RANDOM, RANDOM, "--rules", "trick_winner=nope"), "trick_winner: must be one of"),
        (("match", RANDOM, "sample_bots.random_bot:Nope"), "has no Bot subclass Nope"),
        (("match", RANDOM, "python sample_bots/no_such_bot.py"), "no script 'sample_bots/no_such_bot.py' in"),
        (
            ("match", RANDOM, "python -c \"raise SystemExit('no model file')\""),
            "before connecting; its last output: 'no model file'",
        ),
    ]
    for args, message in cases:
        result = referee(*args)
        assert result.returncode != 0, args
        assert "Traceback" not in result.stderr, result.stderr
        errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
        assert len(errors) == 1, result.stderr
        assert message in errors[0]
        if {"--rule", "--rules"} & set(args):  # a wrong flag shows the usage first
            assert result.stderr.startswith("Usage: referee match"), result.stderr
        else:  # a bot that cannot play is one line, no usage banner: the flags were right
            assert result.stderr == errors[0] + "\n", result.stderr
            # 2: refused before anything started; 1: the bot started and failed
            assert result.returncode == (1 if "before connecting" in message else 2)


def test_a_wrongly_typed_action_of_an_in_process_bot_is_its_fault_not_a_void_match():
    cases = (
        ("tests.bots.badtypes:FloatDeclarer", "a declaration is a whole number of tricks (an int)"),
        ("tests.bots.badtypes:CodePlayer", "a play is a Card, not '"),
    )
    for bot, problem in cases:
        result = referee("match", RANDOM, bot, "--seed", "5", "--max-faults", "3")
        assert result.returncode == 0, result.stderr  # a void match exits 1
        assert "void" not in result.stdout + result.stderr
        faults = [line for line in result.stdout.splitlines() if line.startswith("fault:")]
        assert len(faults) == 3, result.stdout  # then the seat forfeits and the referee plays it
        assert all(" malformed: seat 1: " + problem in line for line in faults), faults
        assert "with the referee's autopilot)" in result.stdout  # the standings: forfeited in deal N


def test_the_seats_are_named_by_the_bots_themselves_or_by_name_options():
    process = "python sample_bots/random_bot.py"  # its script is random_bot.py; it calls itself random
    result = referee("match", process, "sample_bots.heuristic:HeuristicBot", process, "--seed", "3")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "seats: 0=random, 1=heuristic, 2=random#2"
    assert lines[1].startswith("deal  1  dealer ")
    named = referee(
        "match", process, "sample_bots.heuristic:HeuristicBot", process, "--seed", "3", "--name", "alice"
    )
    assert named.returncode == 0, named.stderr
    assert named.stdout.splitlines()[0] == "seats: 0=alice, 1=heuristic, 2=random"
    assert "alice" in named.stdout.splitlines()[1]

    def words(text: str) -> list[str]:
        return text.replace("alice", "random").replace("random#2", "random").split()

    assert words(named.stdout) == words(result.stdout)  # the same match, under other names
    too_many = referee("match", RANDOM, RANDOM, "--name", "a", "--name", "b", "--name", "c")
    assert too_many.returncode == 2
    assert "--name" in too_many.stderr.splitlines()[-1]
