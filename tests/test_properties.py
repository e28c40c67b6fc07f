"""Property-based tests of the public entry points (Hypothesis): random bad values of every
argument get a clear error of the documented type raised by this project's own code, or a
correct result; never a crash inside a dependency, a hang or a silently changed figure.

The profile (conftest.py) is derandomized: the same examples on every run, no database.
"""

from __future__ import annotations

import dataclasses
import json
import traceback
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gostop.agents.registry import make_agent
from gostop.train.cli import main
from gostop.train.config import SECTIONS, TrainConfig
from gostop_env.core import GameBatch, IllegalActionError, ReferenceGame, Rules
from gostop_env.core.rules import MAX_CARRY
from gostop_env.replay import Replay

OUR_CODE = tuple(str(Path(__file__).parents[1] / package) for package in ("gostop_env", "agents", "train"))

junk = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.integers(-3, 130),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.binary(max_size=3),
    st.lists(st.integers(-5, 130), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)
"""Values of every kind: the right type and the wrong one, in range and far out of it."""


def raised_here(error: BaseException) -> bool:
    """The error was raised by this project's code, or by Python's own argument binding at
    the call (an unknown keyword, named in the message), not deep inside a dependency."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return frame.filename.startswith(OUR_CODE) or frame.filename in ("<string>", __file__)


def clear(call, *allowed: type[BaseException]):
    """Run ``call``; return its result, or None when it raised one of ``allowed`` from our code."""
    try:
        return call()
    except allowed as error:
        assert raised_here(error), f"{type(error).__name__} from inside a dependency: {error}"
        assert str(error), "an error without a message"
        return None


# ---- Rules ----------------------------------------------------------------------------------------
RULE_FIELDS = [f.name for f in dataclasses.fields(Rules)]
VALID = {
    "players": [2, 3],
    "jokers": [0, 1, 2],
    "target": [None, 3, 7],
    "go_multiplier": ["doubling_from_3"],
    "ja_ppuk": ["any_turn"],
    "choice_rule": ["always"],
    "steal_choice": ["highest"],
    "pi_bak_threshold": [0, 7],
    "layout_four": ["dealer_wins", "nagari"],
    "first_ppuk_chips": [7],
    "three_ppuk_chips": [7],
    "chongtong_chips": [10],
}


@given(
    st.dictionaries(
        st.sampled_from([*RULE_FIELDS, "bogus"]),
        st.one_of(junk, st.sampled_from([v for vs in VALID.values() for v in vs])),
        max_size=4,
    )
)
def test_rules_take_valid_options_and_refuse_the_rest(options):
    rules = clear(lambda: Rules(**options), ValueError, TypeError)
    if rules is not None:
        assert Rules(**rules.to_dict()) == rules
        assert rules.players in (2, 3) and rules.target_score >= 1
        json.dumps(rules.to_dict())


@given(junk, junk)
def test_rule_presets_refuse_bad_names_and_player_counts(name, players):
    rules = clear(lambda: Rules.preset(name, players=players), ValueError)
    if rules is not None:
        assert name in ("seed", "korean", "matgo") and rules.players == players


@given(st.one_of(junk, st.integers(0, MAX_CARRY)))
def test_carry_is_an_integer_within_the_bound(carry):
    game = clear(lambda: ReferenceGame.from_seed(Rules(), 0, carry=carry), ValueError, TypeError)
    batch = clear(lambda: GameBatch.from_seed(Rules(), 0, 2, carry=carry), ValueError, TypeError)
    if not isinstance(carry, list):  # a batch also takes one carry per game
        assert (game is None) == (batch is None)
    if game is not None:
        assert game.carry == carry and (batch.carry == carry).all()


@given(junk)
def test_seeds_are_non_negative_integers_everywhere(seed):
    from gostop_env.gym_env import GoStopEnv
    from gostop_env.pettingzoo_env import raw_env
    from gostop_env.vec_env import GoStopVecEnv

    starts = [
        lambda: GameBatch.from_seed(Rules(), seed, 2),
        lambda: GameBatch.from_seeds(Rules(), [seed]),
        lambda: ReferenceGame.from_seed(Rules(), seed),
        lambda: GoStopEnv().reset(seed=seed),
        lambda: raw_env().reset(seed=seed),
        lambda: GoStopVecEnv(2, seed=seed),
    ]
    outcomes = [clear(lambda s=start: [s()], TypeError, ValueError) is None for start in starts]  # [None]: accepted
    valid = type(seed) is int and seed >= 0
    assert outcomes == [not valid] * len(starts) or seed is None  # None: fresh entropy where allowed


# ---- steps of the engines -------------------------------------------------------------------------
@given(st.one_of(junk, st.integers(0, 124)))
def test_reference_step_takes_legal_integers_only(action):
    game = ReferenceGame.from_seed(Rules(), 21)
    before = game.snapshot()
    if clear(lambda: game.step(action), TypeError, IllegalActionError) is None:
        assert game.snapshot() == before  # refused: nothing changed
    else:
        assert type(action) is int and 0 <= action < 125


@given(st.lists(st.one_of(junk, st.integers(-1, 124)), min_size=0, max_size=4))
def test_batch_step_takes_one_legal_integer_per_game_only(actions):
    batch = GameBatch.from_seed(Rules(), 21, 3)
    before = [batch.snapshot(i) for i in range(3)]
    if clear(lambda: batch.step(actions), TypeError, ValueError) is None:
        assert [batch.snapshot(i) for i in range(3)] == before
    else:
        assert len(actions) == 3


# ---- the three environments -------------------------------------------------------------------------
@given(st.one_of(junk, st.integers(0, 124)), st.sampled_from(["raise", "penalize"]))
def test_gymnasium_env_step(action, mode):
    from gostop_env.gym_env import GoStopEnv

    env = GoStopEnv(illegal_action=mode)
    env.reset(seed=5)
    out = clear(lambda: env.step(action), TypeError, IllegalActionError)
    if out is not None:
        _, reward, terminated, _, info = out
        legal = type(action) is int or isinstance(action, np.integer)
        assert legal and (("illegal_action" in info) == (reward == env.illegal_reward and terminated))


@given(st.one_of(junk, st.integers(0, 124)))
def test_aec_env_step(action):
    from gostop_env.pettingzoo_env import raw_env

    env = raw_env()
    env.reset(seed=5)
    clear(lambda: env.step(action), TypeError, IllegalActionError)


@given(st.lists(st.one_of(junk, st.integers(0, 124)), max_size=3))
def test_vector_env_step(actions):
    from gostop_env.vec_env import GoStopVecEnv

    env = GoStopVecEnv(2, seed=5)
    env.reset()
    clear(lambda: env.step(np.asarray(actions, dtype=object) if actions else actions), TypeError, ValueError)


@given(
    st.dictionaries(
        st.sampled_from(
            [
                "players",
                "preset",
                "encoding",
                "learner_seat",
                "reward_scale",
                "illegal_action",
                "opponents",
                "nagari_carry",
            ]
        ),
        junk,
        max_size=2,
    )
)
def test_gymnasium_env_options(options):
    from gostop_env.gym_env import GoStopEnv

    clear(lambda: GoStopEnv(**options), ValueError, TypeError)


# ---- files from others --------------------------------------------------------------------------------
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


def _valid_replay() -> dict:
    game = ReferenceGame.from_seed(Rules(), 8)
    actions = []
    while not game.done:
        actions.append(game.legal_actions()[0])
        game.step(actions[-1])
    return {
        "format": "gostop-replay/1",
        "rules": Rules().to_dict(),
        "deck": [int(c) for c in game.deck],
        "actions": actions,
        "carry": 0,
        "payments": game.payments,
    }


@given(
    st.one_of(
        json_values,
        st.builds(
            lambda key, value: {**_valid_replay(), key: value},
            st.sampled_from(["rules", "deck", "actions", "carry", "payments", "x"]),
            st.one_of(json_values, junk.filter(lambda v: not isinstance(v, bytes))),
        ),
    )
)
def test_replay_files(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("replay") / "hand.json"
    path.write_text(json.dumps(data))
    replay = clear(lambda: Replay.load(path), ValueError)
    if replay is not None:
        steps = clear(lambda: list(replay.play()), ValueError)
        if steps is not None:
            assert len(steps) == len(replay.actions)


CONFIG_KEYS = [
    "kind",
    "out",
    "seed",
    "players",
    "preset",
    "encoding",
    "checkpoint_every",
    *(f"{section}.{f.name}" for section, cls in SECTIONS.items() for f in dataclasses.fields(cls)),
]


@given(st.sampled_from(CONFIG_KEYS), st.one_of(junk.filter(lambda v: not isinstance(v, bytes)), json_values))
def test_training_configs(key, value):
    data = {"ppo": {"timesteps": 1000}, "bc": {"hands": 10}}
    *section, last = key.split(".")
    (data.setdefault(section[0], {}) if section else data)[last] = value
    config = clear(lambda: TrainConfig.from_dict(data), ValueError)
    if config is not None:
        assert TrainConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config


@given(st.text(max_size=30))
def test_agent_names(name):
    clear(lambda: make_agent(name, Rules()), ValueError)


@given(
    st.sampled_from(["encoding", "players", "preset", "decides", "card_player", "network", "format"]),
    st.one_of(junk.filter(lambda v: not isinstance(v, bytes)), json_values),
)
def test_model_folders(tmp_path_factory, key, value):
    pytest.importorskip("sb3_contrib")
    from gostop.agents.learned import SHIPPED_MODELS, ModelError
    from gostop.agents.registry import load_model

    folder = tmp_path_factory.mktemp("model")
    meta = json.loads((SHIPPED_MODELS / "ppo" / "model.json").read_text())
    (folder / "model.json").write_text(json.dumps({**meta, key: value}))
    (folder / "policy.safetensors").symlink_to(SHIPPED_MODELS / "ppo" / "policy.safetensors")
    clear(lambda: load_model(str(folder), Rules()), ModelError)


# ---- command-line options ------------------------------------------------------------------------------
number = st.one_of(st.integers(-3, 12).map(str), st.text(max_size=4))


@given(
    number,
    number,
    number,
    st.sampled_from(["2", "3", "4", "x"]),
    st.sampled_from(["0", "1", "3", "-1"]),
    st.sampled_from(["seed", "korean", "other"]),
)
def test_simulate_options(hands, batch, seed, players, jokers, preset):
    args = [
        "simulate",
        "--hands",
        hands,
        "--batch",
        batch,
        "--seed",
        seed,
        "--players",
        players,
        "--jokers",
        jokers,
        "--preset",
        preset,
    ]
    try:
        assert main(args) == 0
    except SystemExit as stop:
        assert stop.code == 2


@given(number, number, st.sampled_from(["greedy", "random", "bogus", "greedy:k=x", "model:nothing"]))
def test_compare_options(deals, seed, agent):
    try:
        assert main(["compare", agent, "random", "--deals", deals, "--seed", seed]) == 0
    except SystemExit as stop:
        assert stop.code == 2
