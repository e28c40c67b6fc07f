"""Tournaments: duplicate deals, determinism, resuming, figures, outputs, replays."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gostop.agents.metrics import agent_figures, head_to_head, paired_differences, wilson
from gostop.agents.report import leaderboard_markdown, write_outputs
from gostop.agents.tournament import TournamentConfig, run_tournament
from gostop.train.cli import main
from gostop_env.replay import Replay


def figures(results):
    return [f.as_dict() for f in agent_figures(results)]


def test_greedy_beats_random_over_10000_duplicate_deals():
    results = run_tournament(TournamentConfig(("greedy", "random"), deals=10_000, chunk=2500, workers=2))
    best, worst = agent_figures(results)
    assert best.agent == "greedy" and best.chips_ci[0] > 0 and best.games == 20_000
    assert best.chips == pytest.approx(-worst.chips)  # two players: zero-sum per hand
    assert best.rating > worst.rating


def test_same_seed_same_figures_with_any_number_of_workers():
    config = TournamentConfig(("greedy", "simple", "random"), players=3, preset="korean", deals=300, chunk=100)
    one = figures(run_tournament(config))
    two = figures(run_tournament(TournamentConfig(**{**config.__dict__, "workers": 2})))
    assert one == two
    assert figures(run_tournament(config)) == one


def test_interrupted_tournament_resumes_without_losing_results(tmp_path):
    config = TournamentConfig(("greedy", "random"), deals=400, chunk=100, keep_replays=1)
    whole = figures(run_tournament(config))
    run_tournament(config, tmp_path)
    log = tmp_path / "units.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])  # killed while writing unit 4
    played = []
    resumed = run_tournament(config, tmp_path, progress=lambda units, total: played.append(total) or units)
    assert played == [len(config.units()) - 3]
    assert figures(resumed) == whole
    with pytest.raises(ValueError, match="another tournament configuration"):
        run_tournament(TournamentConfig(("greedy", "random"), deals=401, chunk=100), tmp_path)


def test_outputs_and_replays(tmp_path):
    config = TournamentConfig(("greedy", "simple", "random"), deals=200, chunk=100, keep_replays=2)
    results = run_tournament(config, tmp_path)
    written = write_outputs(results, tmp_path)
    names = {p.name for p in written}
    assert {
        "leaderboard.md",
        "leaderboard.csv",
        "results.json",
        "chips.png",
        "head_to_head.png",
        "ratings.png",
    } <= names
    assert all(p.stat().st_size > 0 for p in written)
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["head_to_head"]["greedy"]["random"] > 0 and len(data["agents"]) == 3
    table = head_to_head(results)
    assert np.allclose(table, -table.T, equal_nan=True)
    replays = [p for p in written if p.parent.name == "replays"]
    assert len(replays) == 2
    for path in replays:
        replay = Replay.load(path)
        list(replay.play())  # checks the payments
    assert "| greedy |" in leaderboard_markdown(results)
    assert "| greedy − random |" in leaderboard_markdown(results)
    assert [(d["first"], d["second"]) for d in data["paired_differences"]] == [
        ("greedy", "simple"),
        ("greedy", "random"),
        ("simple", "random"),
    ]


def test_paired_differences_take_the_same_deals_of_both_agents():
    """In three-player games each deal seats every agent: the difference is taken deal by
    deal, so it equals the difference of the agents' mean chips, with a paired interval."""
    results = run_tournament(TournamentConfig(("greedy", "simple", "random"), players=3, deals=300, chunk=100))
    chips = {f.agent: f.chips for f in agent_figures(results)}
    differences = {(d.first, d.second): d for d in paired_differences(results)}
    for (first, second), d in differences.items():
        assert d.chips == pytest.approx(chips[first] - chips[second])
        assert d.chips_ci[0] < d.chips < d.chips_ci[1]
    assert differences[("greedy", "random")].chips_ci[0] > 0


def test_wilson_interval():
    low, high = wilson(82, 100)
    assert low < 0.82 < high and high - low < 0.16
    assert wilson(0, 10)[0] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(agents=("greedy",)), "at least two agents"),
        (dict(agents=("greedy", "greedy")), "must differ"),
        (dict(agents=("greedy", "random"), players=3), "3 players need at least 3 agents"),
        (dict(agents=("greedy", "alpha")), "unknown agent"),
        (dict(agents=("greedy", "random"), deals=0), "at least 1"),
    ],
)
def test_bad_configurations(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TournamentConfig(**kwargs)


def test_gostop_tournament_command(tmp_path, capsys):
    assert (
        main(
            [
                "tournament",
                "greedy",
                "random",
                "simple",
                "--players",
                "3",
                "--deals",
                "60",
                "--chunk",
                "30",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "60 duplicate deals, 3 players" in out and (tmp_path / "leaderboard.csv").exists()


def test_ray_gives_the_same_figures_as_the_local_runner():
    ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'gostop[ray]')")

    config = TournamentConfig(("greedy", "simple", "random"), deals=200, chunk=50, workers=2)
    try:
        on_ray = figures(run_tournament(config, runner="ray"))
    finally:
        ray.shutdown()
    assert on_ray == figures(run_tournament(config))


def test_the_leaderboard_says_what_its_rating_is(tmp_path):
    from gostop.agents.report import COMPACT, RATING_LEGEND, leaderboard_markdown
    from gostop.agents.tournament import TournamentConfig, run_tournament

    results = run_tournament(TournamentConfig(("greedy", "random"), deals=40), tmp_path)
    assert RATING_LEGEND in leaderboard_markdown(results)
    without = tuple(c for c in COMPACT if c != "rating")
    assert RATING_LEGEND not in leaderboard_markdown(results, without)


def match_config(**changes) -> TournamentConfig:
    base = dict(agents=("greedy", "greedy:stop=threshold:gos=1:margin=3"), deals=120, chunk=40, match_hands=4)
    return TournamentConfig(**{**base, **changes})


def match_table(results):
    from gostop.agents.metrics import match_figures

    return [f.as_dict() for f in match_figures(results)]


def test_a_match_tournament_plays_the_duplicate_matches_compare_plays():
    from gostop.agents import make_agent
    from gostop.agents.compare import compare_matches
    from gostop_env.core import Rules

    config = match_config(deals=300, chunk=300)
    results = run_tournament(config)
    first = {f["agent"]: f for f in match_table(results)}[config.agents[0]]
    a, b = (make_agent(name, Rules()) for name in config.agents)  # both play without chance
    compared = compare_matches(a, b, config.match_format, 300, seed=config.seed)
    assert first["win_rate"] == pytest.approx(compared.win_rate)
    assert first["chips_per_match"] == pytest.approx(compared.chips_per_match)
    assert first["chips_per_hand"] == pytest.approx(compared.chips_per_hand)
    assert first["matches"] == 600 and first["hands_per_match"] == 4
    records = results.records()
    assert (records["standing"].sum(axis=1) == 0).all() and (records["hands"] == 4).all()


def test_an_interrupted_match_tournament_resumes_to_the_same_figures(tmp_path):
    config = match_config(agents=("greedy", "random", "simple"), bankroll=30, match_hands=12)
    whole = match_table(run_tournament(config))
    run_tournament(config, tmp_path)
    log = tmp_path / "units.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:5]) + "\n" + lines[5][:50])  # killed while writing unit 6
    played = []
    resumed = run_tournament(config, tmp_path, progress=lambda units, total: played.append(total) or units)
    assert played == [len(config.units()) - 5] and match_table(resumed) == whole
    assert any(f["hands_per_match"] < 12 for f in whole)  # the bankroll ended some matches early
    leaderboard = leaderboard_markdown(resumed)
    assert "120 duplicate matches of 12 hands, bankroll 30" in leaderboard and "match win rate" in leaderboard
    won = sum(f["win_rate"] * f["matches"] for f in whole)
    assert won == pytest.approx(120 * len(config.lineups()))  # one win a match, shared when level
    with pytest.raises(ValueError, match="another tournament configuration"):
        run_tournament(match_config(agents=("greedy", "random", "simple"), match_hands=12), tmp_path)


def test_a_forged_match_record_is_refused(tmp_path):
    from gostop.agents.tournament import TournamentLogError

    config = match_config(deals=40)
    run_tournament(config, tmp_path)
    log = tmp_path / "units.jsonl"
    unit = json.loads(log.read_text().splitlines()[0])
    unit["records"]["standing"][0] = [500, 0]
    log.write_text(json.dumps(unit) + "\n")
    with pytest.raises(TournamentLogError, match="cannot have produced"):
        run_tournament(config, tmp_path)
    unit["records"]["standing"][0], unit["records"]["hands"][0] = [3, -3], 2  # short without a bankroll
    log.write_text(json.dumps(unit) + "\n")
    with pytest.raises(TournamentLogError, match="cannot have produced"):
        run_tournament(config, tmp_path)


@pytest.mark.parametrize(
    "changes,message",
    [
        (dict(match_hands=0), "hands must be 1"),
        (dict(match_hands=True), "whole number"),
        (dict(match_hands=8, bankroll=2), "cannot cover one hand's smallest payment"),
        (dict(match_hands=None, bankroll=40), "bankroll needs match_hands"),
        (dict(keep_replays=2), "not of matches"),
    ],
)
def test_bad_match_tournaments(changes, message):
    with pytest.raises(ValueError, match=message):
        match_config(**changes)


def test_gostop_tournament_plays_matches(tmp_path, capsys):
    args = ["tournament", "greedy", "random", "--match-hands", "3", "--deals", "30", "--out", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "30 duplicate matches of 3 hands" in out and "| greedy | " in out
    assert json.loads((tmp_path / "results.json").read_text())["agents"][0]["agent"] == "greedy"
    with pytest.raises(SystemExit):
        main(["tournament", "greedy", "random", "--bankroll", "50", "--out", str(tmp_path / "b")])
    assert "bankroll needs match_hands" in capsys.readouterr().err
