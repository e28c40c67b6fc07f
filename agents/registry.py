"""Build agents from command-line names.

``random``, ``simple``, ``greedy``; a go/stop rule follows ``stop=``: ``greedy:stop=stop``
(the default: always stop) or ``greedy:stop=threshold:k=3:gos=2:stock=4:margin=2``
(parameters of :class:`agents.go_stop.Threshold`: go while score < k, gos < gos, stock
>= stock, and no opponent within margin of the target).
"""
from __future__ import annotations

from gostop_env.core import Rules
from gostop_env.policy import Policy, RandomPolicy

from .go_stop import make_go_stop_rule
from .greedy import Greedy, SimpleGreedy

CARD_PLAYERS = {"simple": SimpleGreedy, "greedy": Greedy}


def make_agent(name: str, rules: Rules | None = None) -> Policy:
    """The agent a name describes (see the module docstring); ValueError on a bad name."""
    kind, *options = name.strip().split(":")
    if kind == "random":
        if options:
            raise ValueError(f"agent 'random' takes no options, got {options}")
        return RandomPolicy()
    if kind not in CARD_PLAYERS:
        raise ValueError(f"unknown agent {kind!r}: choose from {['random', *CARD_PLAYERS]}")
    rule_kind, rule_params = "stop", {}
    for option in options:
        key, equals, value = option.partition("=")
        if not equals or not value:
            raise ValueError(f"agent option {option!r} must look like key=value")
        if key == "stop":
            rule_kind = value
        elif key in ("k", "gos", "stock", "margin"):
            rule_params[key] = _integer(key, value)
        else:
            raise ValueError(f"unknown option {key!r} for agent {kind!r}: use stop=<rule> and its k, gos, stock, margin")
    return CARD_PLAYERS[kind](go_stop=make_go_stop_rule(rule_kind, **rule_params), rules=rules)


def _integer(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"option {key!r} needs an integer, got {value!r}") from None
