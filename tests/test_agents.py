"""Baseline agents: their choices on stacked positions, strength, names, and no peeking."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import BACKENDS, hide_differently, position

from gostop.agents import AlwaysStop, Greedy, SimpleGreedy, Threshold, compare, make_agent, play_hands
from gostop.agents.learned import ValueEstimate, value_estimate
from gostop.agents.search import SearchAgent, play_to_leaf, rollout_chips
from gostop.agents.view import View
from gostop_env.core import GameBatch, Rules, random_legal_actions
from gostop_env.core import actions as A
from gostop_env.core.deck import shuffled_decks
from gostop_env.encodings import encode
from gostop_env.policy import GameView, RandomPolicy

RULES = Rules()


def decide(agent, pos, rules=RULES) -> int:
    batch = GameBatch.from_positions(rules, [pos])
    seat = int(batch.seat[0])
    return int(agent(encode(batch, [seat]), batch.legal_action_mask(), np.random.default_rng(0))[0])


@pytest.mark.parametrize("agent", [SimpleGreedy(), Greedy()])
def test_takes_the_obvious_capture(agent):
    pos = position(RULES, {0: [0, 21, 30], 1: [20]}, layout=[2, 36])
    assert decide(agent, pos) == 0


def test_greedy_completes_godori_over_a_plain_pair():
    pos = position(RULES, {0: [29, 18], 1: [20]}, layout=[28 + 3, 19], piles={0: [4, 12]})
    assert decide(Greedy(), pos) == 29  # the geese complete the three birds


def test_greedy_prefers_a_stack_capture_that_steals():
    pos = position(RULES, {0: [3, 21], 1: [20]}, layout=[0, 1, 2, 22], piles={1: [6, 7]})
    assert decide(Greedy(), pos) == 3


def test_bombs_when_it_can():
    pos = position(RULES, {0: [4, 5, 6, 30], 1: [20]}, layout=[7, 31])
    assert decide(SimpleGreedy(), pos) == A.bomb_action(1)
    shaken = position(RULES, {0: [4, 5, 6, 30], 1: [20]}, layout=[7, 31], revealed=[[4, 5, 6], []], shakes=[1, 0])
    assert decide(Greedy(), shaken) == 4  # once shaken, no bomb: it takes the fourth card


def test_greedy_plays_a_bonus_card_that_steals_before_a_card_that_takes_nothing():
    matgo = Rules.preset("matgo")
    pos = position(matgo, {0: [48, 22], 1: [20]}, layout=[30], piles={1: [6, 7]})
    assert decide(Greedy(rules=matgo), pos, matgo) == 48
    pairs = position(matgo, {0: [48, 29], 1: [20]}, layout=[28], piles={1: [6, 7]})
    assert decide(Greedy(rules=matgo), pairs, matgo) == 29  # the August bright is worth more


def test_greedy_shakes_then_plays():
    pos = position(RULES, {0: [4, 5, 6, 30], 1: [20]}, layout=[31])
    assert decide(Greedy(), pos) == A.shake_action(1)


def test_choice_takes_the_more_valuable_card():
    batch = GameBatch.from_positions(RULES, [position(RULES, {0: [0], 1: [20]}, layout=[1, 2], stock=[8])])
    batch.step([0])
    masks = batch.legal_action_mask()
    for agent in (SimpleGreedy(), Greedy()):
        assert agent(encode(batch, [0]), masks, np.random.default_rng(0))[0] == A.choose_action(1)


def test_go_stop_rules():
    pos = position(
        RULES, {0: [20], 1: [24]}, piles={0: [2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 34]}, go_stop=True
    )
    assert decide(Greedy(go_stop=AlwaysStop()), pos) == A.STOP
    assert decide(Greedy(go_stop=Threshold(score_below=9)), pos) == A.GO
    assert decide(Greedy(go_stop=Threshold(score_below=7)), pos) == A.STOP
    assert decide(Greedy(go_stop=Threshold(max_gos=1)), pos) == A.GO
    pos.gos, pos.go_scores = [1, 0], [6, 0]
    assert decide(Greedy(go_stop=Threshold(max_gos=1)), pos) == A.STOP


def test_view_decodes_the_counters():
    batch = GameBatch.from_seed(Rules(players=3), 2, 8)
    rng = np.random.default_rng(0)
    for _ in range(6):
        batch.step(random_legal_actions(batch.legal_bits, rng))
    view = View.of(encode(batch, batch.seat))
    rows = np.arange(8)
    assert (view.scores[:, 0] == batch.scores[rows, batch.seat]).all()
    assert (view.stock_size == batch.stock_len - batch.stock_pos).all()
    assert (view.target == 3).all()


def test_greedy_beats_random_and_simple_over_duplicate_deals():
    vs_random = compare(Greedy(), RandomPolicy(), 600, seed=3)
    vs_simple = compare(Greedy(), SimpleGreedy(), 1500, seed=4)
    assert vs_random.ci95[0] > 0 and vs_simple.ci95[0] > 0, (vs_random, vs_simple)
    assert compare(SimpleGreedy(), RandomPolicy(), 600, seed=5).ci95[0] > 0


def test_three_player_compare_seats_a_in_every_seat_against_two_bs():
    rules = Rules.preset("korean", players=3)
    level = compare(Greedy(), Greedy(), 300, seed=7, rules=rules)  # each deal's three seats: zero-sum
    assert abs(level.chips_per_hand) < 1e-9 and level.deals == 300
    assert compare(Greedy(), RandomPolicy(), 300, seed=8, rules=rules).ci95[0] > 0


def test_three_player_hands_run_with_mixed_agents():
    rules = Rules(players=3)
    rng = np.random.default_rng(0)
    batch = play_hands(
        rules, [Greedy(rules=rules), SimpleGreedy(rules=rules), RandomPolicy()], shuffled_decks(rules, rng, 200), rng
    )
    assert batch.done.all() and (batch.payments.sum(axis=1) == 0).all()


@pytest.mark.parametrize("name", ["simple", "greedy", "greedy:stop=threshold:k=9:gos=2:stock=3:margin=1"])
def test_agents_never_read_hidden_cards(name):
    agent = make_agent(name)
    batch = GameBatch.from_seed(RULES, 7, 64)
    rng = np.random.default_rng(1)
    for _ in range(12):
        live = ~batch.done
        viewers = batch.seat.astype(np.int64)
        changed = hide_differently(batch, viewers, rng)
        masks = batch.legal_action_mask()
        before = agent(encode(batch, viewers)[live], masks[live], np.random.default_rng(0))
        after = agent(encode(changed, viewers)[live], changed.legal_action_mask()[live], np.random.default_rng(0))
        assert (before == after).all()
        batch.step(random_legal_actions(batch.legal_bits, rng))


@pytest.mark.parametrize(
    "name,message",
    [
        ("alpha", "unknown agent 'alpha'"),
        ("greedy:k", "key=value"),
        ("greedy:stop=never", "unknown go/stop rule"),
        ("greedy:k=x", "needs an integer"),
        ("random:k=1", "takes no options"),
        ("greedy:colour=red", "unknown option"),
    ],
)
def test_bad_agent_names_say_why(name, message):
    with pytest.raises(ValueError, match=message):
        make_agent(name)


def test_search_takes_the_obvious_capture_and_stops_when_stopping_wins():
    agent = make_agent("search:n=32")
    assert decide_state(agent, position(RULES, {0: [0, 21, 30], 1: [20, 25]}, layout=[2, 36])) == 0
    # the last decision of the hand: going can only lose the 7 chips that stopping wins now
    pile = [2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 34]
    late = position(RULES, {0: [], 1: [20]}, stock=[24], piles={0: pile}, rest_to=1, go_stop=True)
    assert decide_state(agent, late) == A.STOP


def test_search_goes_where_going_cannot_lose_and_greedy_stops():
    """Seat 0 may go with one junk left to pair on the layout: nobody else holds or can flip
    its month (the other two cards are in seat 0's pile), and the opponent's last card and
    the last flip can take nothing. Going gains that pair and a go; greedy always stops."""
    sure_go = position(RULES, {0: [2], 1: [20]}, layout=[3], stock=[24], rest_to=0, go_stop=True)
    assert decide(make_agent("greedy"), sure_go) == A.STOP
    assert decide_state(make_agent("search:n=8:z=2"), sure_go) == A.GO


def decide_state(agent, pos, rules=RULES) -> int:
    batch = GameBatch.from_positions(rules, [pos])
    view = GameView(batch, batch.seat.astype(np.int64))
    return int(agent(view, batch.legal_action_mask(), np.random.default_rng(0))[0])


@pytest.mark.parametrize(
    "name",
    [
        "search:n=4",
        "search:n=4:at=gostop:rollout=random",
        "search:n=4:rounds=3:halving=1:z=1",
        "search:n=4:rounds=2:z=1:prior=model:ppo",
        "search:n=4:rounds=1:depth=2:leaf=model:ppo",
    ],
)
def test_search_never_reads_hidden_cards(name):
    agent = make_agent(name)
    batch = GameBatch.from_seed(Rules(players=3), 8, 24)
    rng = np.random.default_rng(2)
    for _ in range(10):
        live = np.flatnonzero(~batch.done)
        viewers = batch.seat.astype(np.int64)
        changed = hide_differently(batch, viewers, rng)
        masks = batch.legal_action_mask()[live]
        before = agent(GameView(batch.select(live), viewers[live]), masks, np.random.default_rng(3))
        after = agent(GameView(changed.select(live), viewers[live]), masks, np.random.default_rng(3))
        assert (before == after).all()
        batch.step(random_legal_actions(batch.legal_bits, rng))


def test_search_at_go_stop_beats_greedy_over_duplicate_deals():
    result = compare(make_agent("search:n=8:at=gostop"), make_agent("greedy"), 500, seed=6)
    assert result.ci95[0] > 0, result


def test_search_options():
    agent = make_agent("search:n=5:at=gostop:seconds=0.01:rollout=simple")
    assert agent.samples == 5 and agent.at == "gostop" and agent.seconds == 0.01
    assert isinstance(agent.rollout, SimpleGreedy)
    agent = make_agent("search:n=7:rounds=3:halving=1:z=1.5")
    assert (agent.samples, agent.rounds, agent.halving, agent.confidence) == (7, 3, True, 1.5)
    default, plain = make_agent("search"), SearchAgent()
    assert (default.samples, default.rounds, default.halving, default.confidence) == (64, 8, True, 2.0)
    assert default.rollout.go_stop == plain.rollout.go_stop == Threshold(min_stock=2, opponent_margin=3)
    assert make_agent("search:z=none").confidence is None
    rollout = make_agent("search:n=3:rollout=greedy:stop=threshold:gos=1").rollout
    assert rollout.go_stop == Threshold(max_gos=1)
    both = make_agent("search:n=3:prior=greedy:stop=threshold:k=9:rollout=greedy:stop=threshold:gos=1")
    assert both.prior.go_stop == Threshold(score_below=9) and both.rollout.go_stop == Threshold(max_gos=1)
    assert make_agent("search:prior=simple").prior.name == "simple"
    with pytest.raises(ValueError, match="search option"):
        make_agent("search:width=3")
    for bad, message in (("z=-1", "'z' must be"), ("rounds=0", "rounds"), ("z=high", "needs a number")):
        with pytest.raises(ValueError, match=message):
            make_agent(f"search:{bad}")


class FakeClock:
    """``time`` for the search module: every round of rollouts takes one second."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


@pytest.mark.parametrize(
    ("seconds", "games", "rounds_played"),
    [(None, 1, [1, 1]), (12.0, 1, [8, 4]), (12.0, 2, [16, 8]), (0.5, 1, [1, 1])],
)
def test_search_spends_its_time_on_more_samples_in_every_round(monkeypatch, seconds, games, rounds_played):
    """``seconds`` a decision (per game of the call): the first pass of a round times it, and
    each round gets its share of the time left by its candidates (4 then 2 here: two thirds
    to the first), at least one pass each."""
    from gostop.agents import search

    clock, played = FakeClock(), []
    round_ = SearchAgent._round

    def timed_round(agent, batch, viewers, candidates, *rest):
        played.append(int(candidates.sum()))
        clock.now += 1.0
        return round_(agent, batch, viewers, candidates, *rest)

    monkeypatch.setattr(search, "time", clock)
    monkeypatch.setattr(SearchAgent, "_round", timed_round)
    agent = SearchAgent(samples=2, rounds=2, seconds=seconds, rules=RULES)
    hand = position(RULES, {0: [0, 4, 8, 12], 1: [20, 24]}, layout=[1, 17])
    batch = GameBatch.from_positions(RULES, [hand] * games)
    masks = batch.legal_action_mask()
    assert (masks.sum(axis=1) == 4).all()
    agent(GameView(batch, batch.seat.astype(np.int64)), masks, np.random.default_rng(0))
    first, second = rounds_played  # halving keeps 2 of 4, and the anchor if not among them
    assert played[:first] == [4 * games] * first and len(played) == first + second
    assert all(pairs < 4 * games for pairs in played[first:])


def test_search_with_a_leaf_value_reads_a_chips_critic_and_refuses_anything_else():
    agent = make_agent("search:n=3:depth=6:leaf=model:expert_ppo:rollout=simple", RULES)
    assert agent.depth == 6 and isinstance(agent.leaf, ValueEstimate) and agent.leaf.chips_per_unit == 10.0
    assert isinstance(agent.rollout, SimpleGreedy) and make_agent("search").leaf is None
    for bad, message in (
        ("leaf=greedy", "trained model's critic"),
        ("depth=0:leaf=model:ppo", "'depth' must be"),
        ("leaf=model:no-such-model", "no-such-model"),
        ("leaf=model:expert_ppo", "trained for 2 players"),
    ):
        with pytest.raises(ValueError, match=message):
            make_agent(f"search:{bad}", Rules(players=3) if "expert_ppo" in bad else RULES)


def test_leaf_rollouts_stop_where_the_viewer_moves_after_depth_moves():
    """play_to_leaf leaves each game finished or, having played at least ``depth`` moves,
    at a decision of the searching seat; the search's leaf chips there are the critic's."""
    batch = GameBatch.from_seed(RULES, 5, 64)
    seats = np.arange(64) % 2
    start = batch.turns.sum(axis=1).copy()
    at_leaf = play_to_leaf(batch, Greedy(), seats, 5, np.random.default_rng(0))
    assert at_leaf.any() and (at_leaf == ~batch.done).all()
    assert (batch.seat[at_leaf] == seats[at_leaf]).all()
    assert (batch.turns.sum(axis=1)[at_leaf] - start[at_leaf] >= 2).all()  # 5 moves hold >= 2 turns
    critic = value_estimate("expert_ppo", RULES)
    fresh = GameBatch.from_seed(RULES, 6, 4)
    game, action = np.array([0, 1]), fresh.legal_action_mask()[[0, 1]].argmax(axis=1)
    chips = rollout_chips(
        fresh, fresh.seat.astype(np.int64), game, action, 8, Greedy(), np.random.default_rng(1), critic, 1
    )
    assert chips.shape == (2, 8) and np.isfinite(chips).all() and (chips != np.round(chips)).any()


@pytest.mark.parametrize("backend", BACKENDS)
def test_rollout_values_are_paired_across_actions(backend):
    """Common random numbers: every action of a game is played on the same samples, so the
    same action listed twice gets identical chips, sample by sample."""
    batch = GameBatch.from_seed(RULES, 4, 3, backend=backend)
    game, action = np.array([0, 0, 0, 1, 1]), np.array([10, 10, 18, 2, 2])
    assert batch.legal_action_mask()[game, action].all()
    chips = rollout_chips(batch, batch.seat.astype(np.int64), game, action, 64, Greedy(), np.random.default_rng(1))
    assert (chips[0] == chips[1]).all() and (chips[3] == chips[4]).all()
    assert (chips[0] != chips[2]).any()  # a different action is valued on those samples, not copied


def test_search_keeps_its_prior_until_the_evidence_is_strong():
    """With an unreachable confidence the search plays exactly its rollout policy's moves."""
    cautious = make_agent("search:n=8:z=1e9:rollout=greedy:stop=threshold:gos=1")
    greedy = make_agent("greedy:stop=threshold:gos=1")
    batch = GameBatch.from_seed(RULES, 5, 64)
    rng = np.random.default_rng(0)
    while not batch.done.all():
        live = np.flatnonzero(~batch.done)
        masks = batch.legal_action_mask()[live]
        seats = batch.seat[live].astype(np.int64)
        chosen = cautious(GameView(batch.select(live), seats), masks, rng)
        assert (chosen == greedy(encode(batch.select(live), seats), masks, rng)).all()
        actions = np.full(len(batch), -1)
        actions[live] = chosen
        batch.step(actions)


def test_expected_value_go_stop_rule_with_any_card_player():
    for name in ("greedy:stop=ev:n=8", "simple:stop=ev:n=8:margin=2"):
        agent = make_agent(name)
        assert agent.at == "gostop" and agent.samples == 8
        pile = [2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23, 26, 27, 30, 34]
        late = position(RULES, {0: [], 1: [20]}, stock=[24], piles={0: pile}, rest_to=1, go_stop=True)
        assert decide_state(agent, late) == A.STOP
    assert make_agent("simple:stop=ev:margin=2").go_margin == 2 and isinstance(
        make_agent("simple:stop=ev").rollout, SimpleGreedy
    )
    with pytest.raises(ValueError, match="ev go/stop rule takes n and margin"):
        make_agent("greedy:stop=ev:k=3")
    with pytest.raises(ValueError, match="belongs to the ev and match go/stop rules"):
        make_agent("greedy:stop=threshold:n=3")


@pytest.mark.parametrize(
    "name",
    [
        "search:seconds=inf",
        "search:seconds=nan",
        "search:seconds=0",
        "search:n=3000000",
        "search:rounds=1000",
        "search:z=inf",
        "search:z=-1",
        "search:halving=2",
        "greedy:stop=ev:n=100000",
        "greedy:stop=threshold:margin=1000",
        "greedy:stop=threshold:k=-1",
        "search:rollout=greedy:stop=ev:n=9999",
    ],
)
def test_agent_names_carry_bounded_numbers(name):
    with pytest.raises(ValueError, match="must be"):
        make_agent(name, Rules.preset("seed", players=2))


def test_model_best_names_the_strongest_shipped_network_for_the_rules():
    pytest.importorskip("sb3_contrib")
    from gostop.agents.learned import BEST_MODELS, SHIPPED_MODELS, ModelError, load_network, model_fingerprint
    from gostop.agents.tournament import TournamentConfig

    for (players, preset), name in BEST_MODELS.items():
        rules = Rules.preset(preset, players=players)
        assert load_network("best", rules)[2] == (SHIPPED_MODELS / name).resolve()
        assert make_agent("model:best", rules).encoding == "vector"
        assert model_fingerprint("best", rules=rules) == model_fingerprint(name)
    assert {(p, preset) for p in (2, 3) for preset in ("seed", "korean")} <= set(BEST_MODELS)
    with pytest.raises(ModelError, match="no shipped network for 2 players"):
        make_agent("model:best", Rules.preset("korean", players=2, jokers=2))  # options no network plays
    with pytest.raises(ModelError, match="give the rules"):
        make_agent("model:best")
    assert TournamentConfig(("model:best", "greedy"), deals=10).key()


def test_the_default_opponent_is_the_best_shipped_network_where_one_fits():
    pytest.importorskip("sb3_contrib")
    from gostop.agents.registry import default_opponent

    assert default_opponent(Rules.preset("seed", players=2)) == "model:best"
    assert default_opponent(Rules.preset("seed", players=2, jokers=2)) == "greedy"  # no network for these rules
