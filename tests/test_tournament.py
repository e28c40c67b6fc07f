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
