"""Build agents from command-line names.

``random``, ``simple``, ``greedy``; a go/stop rule follows ``stop=``: ``greedy:stop=stop``
(the default: always stop) or ``greedy:stop=threshold:k=3:gos=2:stock=4:margin=2``
(parameters of :class:`gostop.agents.go_stop.Threshold`: go while score < k, gos < gos, stock
>= stock, and no opponent within margin of the target).

``stop=ev`` is the expected-value rule: ``greedy:stop=ev:n=16:margin=1`` plays greedy
cards and goes only when determinized rollouts (``n`` samples) value going ``margin``
chips above stopping (a :class:`gostop.agents.search.SearchAgent` searching go/stop only).
``stop=match`` (``greedy:stop=match:n=16``, 2 players) compares the same rollouts by the
chance of winning the match instead, where the hand is one of a match
(:mod:`gostop.agents.match_stop`); on a hand of its own it is the ``ev`` rule.

``search`` is :class:`gostop.agents.search.SearchAgent`: ``search:n=64`` (samples per decision),
``at=gostop`` (search only go/stop decisions), ``seconds=0.5`` (about that long a decision,
per game of a batched call, spent on more samples in every round),
``rollout=<agent>`` (the policy of the rollouts, ``greedy:stop=threshold:stock=2:margin=3``
by default; it comes last and takes the rest of the name: ``search:n=64:rollout=simple``).
``z=2`` plays the rollout policy's own move unless another beats it by a paired
difference of that many standard errors (``z=none``: the best mean, noise and all);
``rounds=8`` runs that many rounds of ``n`` samples; ``halving=1`` drops the worse half
of the actions after each round. Without options: ``n=64:rounds=8:halving=1:z=2``.
``prior=<agent>`` names the policy whose move the search keeps unless beaten (the rollout
policy by default), e.g. a network: ``search:prior=model:expert``; it takes the rest of the
name up to ``:rollout=``, which comes last.

Every number in a name has a range (:data:`RANGES`), so a name from an untrusted place (the
web table, a config) cannot ask for unbounded work: ``n`` 1..4096 samples (1..1024 for the
ev rule), ``rounds`` 1..64, ``seconds`` above 0 and at most 60, ``z`` 0..1e9, ``halving`` 0
or 1, ``k`` and ``stock`` 0..50, ``gos`` 0..10, ``margin`` -100..100; a value outside, or
not finite, is a ValueError.

``model:NAME_OR_PATH`` is a trained network (:mod:`gostop.agents.learned`): a model folder, or
the name of a model shipped with the package (``model:ppo``); ``model:best`` is the strongest
shipped network for the rules in use (``gostop.agents.learned.BEST_MODELS``).
"""

from __future__ import annotations

import math
from pathlib import Path

from gostop_env.core import Rules
from gostop_env.policy import Policy, RandomPolicy

from .go_stop import make_go_stop_rule
from .greedy import Greedy, SimpleGreedy
from .learned import GoStopComposite, card_player_model, load_network, value_estimate
from .match_stop import TIES_GO, match_win_table
from .search import LeafValue, SearchAgent

CARD_PLAYERS = {"simple": SimpleGreedy, "greedy": Greedy}


BEST_OPPONENT, FALLBACK_OPPONENT = "model:best", "greedy"
""":func:`default_opponent`'s choice, and what it falls back to."""


def make_agent(name: str, rules: Rules | None = None) -> Policy:
    """The agent a name describes (see the module docstring); ValueError on a bad name."""
    kind, *options = name.strip().split(":")
    if kind == "model":
        if not options:
            raise ValueError("agent 'model' needs a model: model:NAME_OR_PATH")
        return load_model(name.strip().partition(":")[2], rules)
    if kind == "random":
        if options:
            raise ValueError(f"agent 'random' takes no options, got {options}")
        return RandomPolicy()
    if kind == "search":
        return _search(options, rules)
    if kind not in CARD_PLAYERS:
        raise ValueError(f"unknown agent {kind!r}: choose from {['random', *CARD_PLAYERS, 'search', 'model']}")
    rule_kind, rule_params = "stop", {}
    for option in options:
        key, equals, value = option.partition("=")
        if not equals or not value:
            raise ValueError(f"agent option {option!r} must look like key=value")
        if key == "stop":
            rule_kind = value
        elif key in ("k", "gos", "stock", "margin", "n"):
            rule_params[key] = _integer("ev n" if key == "n" else key, value)
        else:
            raise ValueError(
                f"unknown option {key!r} for agent {kind!r}: use stop=<rule> and its k, gos, stock, margin, n"
            )
    if rule_kind == "ev":
        unknown = sorted(set(rule_params) - {"n", "margin"})
        if unknown:
            raise ValueError(f"the ev go/stop rule takes n and margin, not {unknown}")
        card_player = CARD_PLAYERS[kind](rules=rules)
        return SearchAgent(
            samples=rule_params.get("n", 16),
            rollout=card_player,
            at="gostop",
            go_margin=rule_params.get("margin", 0),
            rules=rules,
            confidence=None,
            halving=False,
            rounds=1,
        )
    if rule_kind == "match":
        unknown = sorted(set(rule_params) - {"n"})
        if unknown:
            raise ValueError(f"the match go/stop rule takes n, not {unknown}")
        return SearchAgent(
            samples=rule_params.get("n", 16),
            rollout=CARD_PLAYERS[kind](rules=rules),
            at="gostop",
            rules=rules,
            confidence=None,
            halving=False,
            rounds=1,
            go_margin=TIES_GO,
            match_values=match_win_table(rules or Rules()),
        )
    if "n" in rule_params:
        raise ValueError("option 'n' belongs to the ev and match go/stop rules (stop=ev, stop=match)")
    return CARD_PLAYERS[kind](go_stop=make_go_stop_rule(rule_kind, **rule_params), rules=rules)


def default_opponent(rules: Rules) -> str:
    """The agent to play against when none is named: ``model:best``, the strongest shipped
    network for ``rules``, where one is shipped for them and loads here (the ``rl`` extra);
    else ``greedy``."""
    try:
        make_agent(BEST_OPPONENT, rules)
    except (ValueError, ImportError):
        return FALLBACK_OPPONENT
    return BEST_OPPONENT


def load_model(
    name_or_path: str, rules: Rules | None = None, deterministic: bool = True, _within: tuple[Path, ...] = ()
) -> Policy:
    """The agent saved in a model folder (or shipped under that name), checked against
    ``rules``: its network, and for a go/stop model the card player it names; with
    ``deterministic=False`` the network samples its moves (see :mod:`.learned`)."""
    network, meta, folder = load_network(name_or_path, rules, deterministic)
    if meta["decides"] == "all":
        return network
    target = card_player_model(meta, folder, _within)
    card_player = (
        load_model(target, rules, _within=(*_within, folder)) if target else make_agent(meta["card_player"], rules)
    )
    return GoStopComposite(card_player, network, name=f"model:{name_or_path}")


def _search(options: list[str], rules: Rules | None) -> SearchAgent:
    settings = {}
    for key in ("rollout", "prior", "leaf"):  # an agent's name takes the rest, options and all: rollout= last
        for at, option in enumerate(options):
            if option.startswith(f"{key}="):
                options, settings[key] = options[:at], ":".join(options[at:]).removeprefix(f"{key}=")
                break
    for option in options:
        key, equals, value = option.partition("=")
        if not equals or key not in SEARCH_OPTIONS:
            raise ValueError(
                f"search option {option!r}: use n=<samples>, rounds=<r>, z=<confidence>|none, halving=0|1, "
                "at=all|gostop, seconds=<s>, depth=<moves>, prior=<agent>, leaf=model:<name>, rollout=<agent>"
            )
        settings[key] = value
    rollout = make_agent(settings.get("rollout", DEFAULT_ROLLOUT), rules)
    z = settings.get("z", str(DEFAULT_SEARCH.confidence))
    return SearchAgent(
        samples=_integer("n", settings.get("n", str(DEFAULT_SEARCH.samples))),
        rollout=rollout,
        at=settings.get("at", "all"),
        seconds=_number("seconds", settings["seconds"]) if "seconds" in settings else None,
        rules=rules,
        confidence=None if z == "none" else _number("z", z),
        halving=_integer("halving", settings.get("halving", str(int(DEFAULT_SEARCH.halving)))) != 0,
        rounds=_integer("rounds", settings.get("rounds", str(DEFAULT_SEARCH.rounds))),
        prior=make_agent(settings["prior"], rules) if "prior" in settings else None,
        leaf=_leaf(settings["leaf"], rules) if "leaf" in settings else None,
        depth=_integer("depth", settings.get("depth", str(DEFAULT_SEARCH.depth))),
    )


def _leaf(name: str, rules: Rules | None) -> LeafValue:
    """The leaf value ``leaf=model:NAME`` names: that model's critic, as chips."""
    if not name.startswith("model:"):
        raise ValueError(f"leaf={name!r}: a leaf value is a trained model's critic, leaf=model:<name or path>")
    return value_estimate(name.removeprefix("model:"), rules)


SEARCH_OPTIONS = ("n", "rounds", "z", "halving", "at", "seconds", "depth", "prior", "leaf", "rollout")
DEFAULT_ROLLOUT = "greedy:stop=threshold:stock=2:margin=3"  # SearchAgent's own default (DEFAULT_ROLLOUT_RULE)
DEFAULT_SEARCH = SearchAgent()
"""``search`` without options: SearchAgent's defaults, which its options start from."""


RANGES: dict[str, tuple[float, float]] = {
    "n": (1, 4096),
    "ev n": (1, 1024),
    "rounds": (1, 64),
    "depth": (1, 200),
    "seconds": (1e-3, 60),
    "z": (0, 1e9),
    "halving": (0, 1),
    "k": (0, 50),
    "stock": (0, 50),
    "gos": (0, 10),
    "margin": (-100, 100),
}
"""The lowest and highest value of each numeric option of an agent name."""


def _in_range(key: str, value: float) -> None:
    low, high = RANGES[key]
    if not (math.isfinite(value) and low <= value <= high):
        raise ValueError(f"option {key.split()[-1]!r} must be {low:g} .. {high:g}, got {value!r}")


def _number(key: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"option {key!r} needs a number, got {value!r}") from None
    _in_range(key, number)
    return number


def _integer(key: str, value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"option {key.split()[-1]!r} needs an integer, got {value!r}") from None
    _in_range(key, number)
    return number
