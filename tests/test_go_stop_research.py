"""Go/stop research: values of going and stopping, decision datasets, studies."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import position

from gostop.agents.decisions import FEATURES, DecisionRecorder, load_table, save_table
from gostop.agents.go_stop_value import go_stop_values
from gostop.agents.greedy import Greedy
from gostop.agents.match import play_hands
from gostop.agents.registry import make_agent
from gostop.agents.studies import advantage_by, threshold_rules, value_dataset, versus
from gostop.agents.tournament import TournamentConfig, run_tournament
from gostop.train.cli import main
from gostop_env.core import GameBatch, Result, Rules
from gostop_env.core import actions as A
from gostop_env.core.deck import shuffled_decks


def _at_decision(hands, layout, stock) -> GameBatch:
    """Seat 0 at a go/stop decision holding every card not named (a huge score)."""
    rules = Rules()
    return GameBatch.from_positions(
        rules, [position(rules, hands, layout=layout, stock=stock, rest_to=0, go_stop=True)]
    )


def _stop_now(batch: GameBatch) -> int:
    stopped = batch.clone()
    stopped.step(np.array([A.STOP]))
    return int(stopped.payments[0, 0])


@pytest.mark.parametrize("perfect", [False, True])
def test_when_going_runs_into_a_nagari_stopping_wins_now(perfect):
    # After a go, seat 1 plays its last card and flips the last stock card, capturing
    # nothing: the cards run out with seat 1 moving last, below the target: nagari, 0 chips.
    batch = _at_decision({0: [], 1: [7]}, layout=[], stock=[11])
    values = go_stop_values(batch, [Greedy(), Greedy()], 16, np.random.default_rng(0), perfect_information=perfect)
    assert values.go[0] == 0 and values.go_half[0] == 0
    assert values.stop[0] == _stop_now(batch) > 0 and values.stop_half[0] == 0
    assert values.advantage_ci()[0, 1] < 0 and values.decision_value()[0] == values.stop[0]


@pytest.mark.parametrize("perfect", [False, True])
def test_when_going_cannot_lose_going_is_worth_more(perfect):
    # After a go, whatever the hidden order of 7, 11 and 15 (three months with no partner
    # on the layout), seat 1 takes nothing and seat 0 takes the Jan junk pair, moves last
    # and stops with two more points and a go: more than stopping now, in every sample.
    batch = _at_decision({0: [2], 1: [7]}, layout=[3], stock=[11, 15])
    values = go_stop_values(batch, [Greedy(), Greedy()], 16, np.random.default_rng(1), perfect_information=perfect)
    assert values.stop[0] == _stop_now(batch)
    assert values.go_ci()[0, 0] > values.stop[0] and values.advantage_ci()[0, 0] > 0


def _decisions(hands: int, seed: int) -> GameBatch:
    """Games at every go/stop decision of ``hands`` hands of a going greedy rule."""
    rules, greedy = Rules(), make_agent("greedy:stop=threshold:gos=3")
    recorder = DecisionRecorder(keep_states=True)
    play_hands(
        rules,
        [greedy, greedy],
        shuffled_decks(rules, np.random.default_rng(seed), hands),
        np.random.default_rng(seed),
        before_step=recorder,
    )
    return recorder.states()


def test_intervals_shrink_as_samples_grow():
    decisions = _decisions(60, seed=3)
    policies = [Greedy(), Greedy()]
    few = go_stop_values(decisions, policies, 8, np.random.default_rng(0))
    many = go_stop_values(decisions, policies, 128, np.random.default_rng(0))
    assert many.go_half.mean() < few.go_half.mean() / 2.5
    assert many.advantage_half.mean() < few.advantage_half.mean() / 2.5


def test_each_choice_comes_with_its_payment_distribution():
    """Quantiles, the chance of paying and a histogram per decision, read from the same
    samples as the means: stopping pays what is on the table in every sample, going spreads."""
    decisions = _decisions(60, seed=3)
    values = go_stop_values(decisions, [Greedy(), Greedy()], 64, np.random.default_rng(0))
    assert values.go_samples.shape == values.stop_samples.shape == (len(decisions), 64)
    assert np.allclose(values.go_samples.mean(axis=1), values.go)
    low, median, high = values.quantiles("go", (0.1, 0.5, 0.9)).T
    assert (low <= median).all() and (median <= high).all() and (low < high).any()
    stop = values.quantiles("stop")
    assert np.allclose(stop, values.stop[:, None]) and (values.loss_probability("stop") == 0).all()
    p_loss = values.loss_probability("go")
    assert ((p_loss >= 0) & (p_loss <= 1)).all() and p_loss.max() > 0
    shares = values.histogram("go", [-1000, -0.5, 0.5, 1000])
    assert np.allclose(shares.sum(axis=1), 1) and np.allclose(shares[:, 0], p_loss)
    for bad in (
        lambda: values.quantiles("fold"),
        lambda: values.quantiles("go", (1.5,)),
        lambda: values.histogram("go", [3, 1]),
    ):
        with pytest.raises(ValueError):
            bad()


def test_values_need_go_stop_decisions_and_two_samples():
    batch = GameBatch.from_seed(Rules(), 0, 4)
    with pytest.raises(ValueError, match="go/stop decision"):
        go_stop_values(batch, [Greedy(), Greedy()], 8, np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least 2"):
        go_stop_values(_decisions(20, 1), [Greedy(), Greedy()], 1, np.random.default_rng(0))


def test_perfect_information_bounds_the_determinized_values_on_average():
    decisions = _decisions(80, seed=5)
    policies = [Greedy(), Greedy()]
    seen = go_stop_values(decisions, policies, 32, np.random.default_rng(0))
    perfect = go_stop_values(decisions, policies, 4, np.random.default_rng(0), perfect_information=True)
    assert perfect.decision_value().mean() >= seen.decision_value().mean() - 1.0
    assert np.array_equal(perfect.stop, seen.stop)  # stopping pays what is on the table


# ---- decision datasets -------------------------------------------------------------------------
def test_tournament_records_every_go_stop_decision_with_its_stake_and_outcome(tmp_path):
    config = TournamentConfig(("greedy:stop=threshold:gos=2", "greedy"), deals=200, seed=2, decisions=True)
    results = run_tournament(config)
    table, records = results.decisions(), results.records()
    assert set(FEATURES) <= set(table) and len(table["deal"]) > 50
    went, chips = np.array(table["went"]), np.array(table["chips"])
    assert went.sum() == records["gos"].sum()  # every go said was recorded
    assert (np.array(table["agent"])[went == 1] == "greedy:stop=threshold:gos=2").all()
    stopped = went == 0
    assert (chips[stopped] == np.array(table["stop_chips"])[stopped]).all()  # a stop pays its stake
    assert (np.array(table["score"]) >= 7).all() and (np.array(table["opponent2_score"]) == -1).all()
    assert (np.array(table["result"])[stopped] == Result.STOP).all()


def test_decision_tables_round_trip_through_csv_and_parquet(tmp_path):
    table = {"deal": np.array([1, 2]), "agent": ["greedy", "model:ppo"], "advantage": np.array([0.5, -1.25])}
    for name in ("t.csv", "t.parquet"):
        if name.endswith("parquet"):
            pytest.importorskip("pyarrow")
        back = load_table(save_table(table, tmp_path / name))
        assert back["deal"].tolist() == [1, 2] and back["agent"].tolist() == ["greedy", "model:ppo"]
        assert back["advantage"].tolist() == [0.5, -1.25]


# ---- studies -----------------------------------------------------------------------------------------
def test_threshold_grid_names_valid_agents_and_versus_ranks_them():
    names = threshold_rules(gos=(1, 2), stock=(None,), margin=(None, 3))
    assert names == [
        "greedy:stop=threshold:gos=1",
        "greedy:stop=threshold:gos=1:margin=3",
        "greedy:stop=threshold:gos=2",
        "greedy:stop=threshold:gos=2:margin=3",
    ]
    rows = versus(names[:2], "greedy", deals=100, seed=0)
    chips = [r["chips"] for r in rows]
    assert sorted(r["agent"] for r in rows) == sorted(names[:2]) and chips == sorted(chips, reverse=True)
    assert all(r["go_rate"] > 0 for r in rows)


def test_value_dataset_and_where_going_pays():
    greedy = make_agent("greedy:stop=threshold:gos=1")
    table = value_dataset(Rules(), [greedy, greedy], hands=120, samples=8, seed=0, perfect_information=True)
    n = len(table["go"])
    assert n > 20 and all(len(v) == n for v in table.values())
    assert np.allclose(table["advantage"], table["go"] - table["stop"])
    assert np.array_equal(table["stop"], table["stop_chips"])  # stopping now pays the stake
    rows = advantage_by(table, "stock_left", [0, 4, 8])
    assert sum(r["decisions"] for r in rows) == n and rows[0]["stock_left"] == "[0, 4)"
    assert (table["go_q10"] <= table["go_q50"]).all() and (table["go_q50"] <= table["go_q90"]).all()
    assert ((table["go_p_loss"] >= 0) & (table["go_p_loss"] <= 1)).all() and (table["stop_p_loss"] == 0).all()


def test_go_stop_commands(tmp_path, capsys):
    out = tmp_path / "values.csv"
    assert (
        main(
            ["go-stop", "values", "greedy:stop=threshold:gos=1", "--hands", "80", "--samples", "4", "--out", str(out)]
            + ["--histogram", str(tmp_path / "payments.png")]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "advantage of going" in printed and "chance of paying" in printed and len(load_table(out)["go"]) > 0
    assert (tmp_path / "payments.png").stat().st_size > 5000
    assert main(["tournament", "greedy", "random", "--deals", "20", "--decisions", "--out", str(tmp_path / "t")]) == 0
    assert (tmp_path / "t" / "decisions.csv").exists()


def test_sweep_command_writes_numeric_interval_columns(tmp_path, capsys):
    out = tmp_path / "sweep.csv"
    assert (
        main(
            [
                "go-stop",
                "sweep",
                "--k",
                "7",
                "--gos",
                "1",
                "--stock",
                "none",
                "--margin",
                "none",
                "--deals",
                "20",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert "chips/hand" in capsys.readouterr().out
    table = load_table(out)
    assert list(table["agent"]) == ["greedy:stop=threshold:k=7:gos=1"]
    assert table["chips_low"][0] <= table["chips"][0] <= table["chips_high"][0]
