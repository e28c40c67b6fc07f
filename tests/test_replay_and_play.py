"""Replays reproduce hands exactly; ``gostop play`` and ``gostop replay`` in the terminal."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from gostop.agents import make_agent
from gostop.train.cli import main
from gostop_env.core import ReferenceGame, Rules
from gostop_env.core.deck import shuffled_decks
from gostop_env.human import LeftGame, play_in_terminal
from gostop_env.replay import Replay, replay_lines


def random_replay(rules: Rules, seed: int) -> tuple[Replay, list]:
    rng = np.random.default_rng(seed)
    deck = [int(c) for c in shuffled_decks(rules, rng, 1)[0]]
    game, actions, events = ReferenceGame(rules, deck), [], []
    while not game.done:
        actions.append(int(rng.choice(game.legal_actions())))
        events.append(game.step(actions[-1]).as_tuple())
    return Replay(rules.to_dict(), deck, actions, 0, game.payments), events


@pytest.mark.parametrize("preset,players", [("seed", 2), ("korean", 3)])
def test_saved_replay_reproduces_events_and_payments(tmp_path, preset, players):
    rules = Rules.preset(preset, players=players, jokers=1)
    for seed in range(20):
        replay, events = random_replay(rules, seed)
        path = tmp_path / f"hand{seed}.json"
        replay.save(path)
        loaded = Replay.load(path)
        assert [e.as_tuple() for _, _, e in loaded.play()] == events
        assert json.loads(path.read_text())["format"] == "gostop-replay/1"


def test_tampered_replay_is_caught(tmp_path):
    replay, _ = random_replay(Rules(), 1)
    replay.payments = [p + 1 for p in replay.payments]
    with pytest.raises(ValueError, match="differ from the recorded"):
        list(replay.play())
    replay.actions = replay.actions[:-1]
    with pytest.raises(ValueError, match="stop before the hand ends"):
        list(replay.play())
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ValueError, match="not a gostop-replay/1 file"):
        Replay.load(tmp_path / "x.json")


def test_play_a_whole_hand_with_a_wrong_entry(tmp_path, capsys):
    answers = iter(["banana", "99"] + ["1"] * 200)
    out = io.StringIO()
    replay = play_in_terminal(
        Rules(), [make_agent("greedy")], seed=4, read=lambda _: next(answers), write=lambda line: out.write(line + "\n")
    )
    text = out.getvalue()
    assert "'banana' is not one of the choices" in text and "'99' is not one of the choices" in text
    assert "Hand over" in text and "Your move: 1) " in text
    assert ReferenceGame(Rules(), replay.deck).rules == Rules() and sum(replay.payments) == 0
    lines = replay_lines(replay)
    assert any("payments:" in line for line in lines)


def _stop_when_asked(out: io.StringIO):
    """A player who stops at its first go/stop decision and plays the first move otherwise."""

    def read(_prompt: str) -> str:
        return "stop" if "2) stop" in out.getvalue().rsplit("Your move:", 1)[-1] else "1"

    return read


def test_terminal_play_shows_the_stop_payment_the_piles_by_kind_and_how_the_hand_was_paid():
    """At a go/stop prompt the player reads what stopping pays now; piles are grouped by
    kind with counts; a stopped hand ends with each loser's factors; a go or a stop is
    told once. Hands are played until the player stops one."""
    from gostop_env.replay import breakdown_lines, payment_breakdown

    for seed in range(60):
        out = io.StringIO()
        replay = play_in_terminal(
            Rules(),
            [make_agent("greedy")],
            seed=seed,
            read=_stop_when_asked(out),
            write=lambda x, out=out: out.write(x + "\n"),
        )
        text = out.getvalue()
        assert "pile: brights " in text and " | animals " in text and " | junk " in text
        assert "you: stop" not in text and "seat 1: stop" not in text and "seat 1: go\n" not in text
        rows = payment_breakdown(replay)
        if "Stopping now pays you" in text and rows and rows[0]["winner"] == 0:
            assert f"Stopping now pays you {replay.payments[0]:+d} chips" in text
            assert all(line in text for line in breakdown_lines(rows))
            return
    pytest.fail("no hand reached a stop of the player's own in 60 seeds")


def test_gostop_play_and_replay_commands(tmp_path, monkeypatch, capsys):
    path = tmp_path / "hand.json"
    monkeypatch.setattr("sys.stdin", io.StringIO("go\n" + "1\n" * 300))
    assert main(["play", "--opponent", "greedy", "--players", "3", "--seed", "2", "--save", str(path)]) == 0
    played = capsys.readouterr().out
    assert "You are seat 0" in played and f"saved the hand to {path}" in played
    assert main(["replay", str(path)]) == 0
    assert "seat 0 hand:" in capsys.readouterr().out


def test_play_stops_cleanly_when_input_ends(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert main(["play", "--seed", "1"]) == 1
    assert "no more input" in capsys.readouterr().out
    with pytest.raises(LeftGame):
        play_in_terminal(
            Rules(),
            [make_agent("random")],
            seed=1,
            read=lambda _: (_ for _ in ()).throw(EOFError),
            write=lambda line: None,
        )


def test_replay_of_a_missing_file_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        main(["replay", "/nonexistent/hand.json"])
    assert "cannot read replay" in capsys.readouterr().err


def _play(answers, seed=4):
    feed, out = iter(answers), io.StringIO()
    try:
        play_in_terminal(
            Rules(), [make_agent("greedy")], seed=seed, read=lambda _: next(feed), write=lambda s: out.write(s + "\n")
        )
    except LeftGame as left:
        out.write(f"LEFT: {left}\n")
    return out.getvalue()


def test_terminal_play_takes_names_prefixes_help_and_quit():
    # seed 4: the first hand holds two May iris junk (offered once) and one Mar card
    text = _play(["help", "play", "mar", "may iris junk", "quit"])
    first_menu = text.split("Your move: ")[1].splitlines()[0]
    assert first_menu.count("May iris junk") == 1 and "Answer with a move's number" in text
    assert "'play' is not one of the choices" in text  # a prefix of many moves
    assert "you: play Mar cherry junk" in text and "you: play May iris junk" in text
    assert "flipped from the stock:" in text and text.rstrip().endswith("LEFT: you left the hand")


def test_terminal_play_names_the_cards_of_a_shake():
    for seed in range(200):
        rules = Rules()
        hand = set(
            shuffled_decks(rules, np.random.default_rng(seed), 1)[0][[5, 6, 7, 8, 9, 19, 20, 21, 22, 23]].tolist()
        )
        months = [m for m in range(12) if len({4 * m + k for k in range(4)} & hand) == 3]
        if months:
            text = _play(["quit"], seed=seed)
            assert "shake " in text and ", " in text.split("shake ")[1].split(")")[0]
            return
    pytest.fail("no deal with a shake in 200 seeds")


def test_terminal_play_tells_a_payment_made_during_the_hand():
    """Under matgo a first-turn ppuk or ttadak is paid at once: the log says so, with each
    seat's chips, when it happens."""
    rules = Rules.preset("matgo")
    for seed in range(200):
        out = io.StringIO()
        play_in_terminal(
            rules,
            [make_agent("greedy", rules)],
            seed=seed,
            read=_stop_when_asked(out),
            write=lambda x, out=out: out.write(x + "\n"),
        )
        told = [line for line in out.getvalue().splitlines() if "paid at once" in line]
        if told:
            amounts = [int(part.split()[-1]) for part in told[0].split(": ", 1)[1].split(", ")]
            assert sum(amounts) == 0 and max(amounts) % 7 == 0
            return
    pytest.fail("no payment during a hand in 200 matgo hands")
