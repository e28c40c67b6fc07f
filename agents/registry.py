"""Build agents from command-line names.

``random``, ``simple``, ``greedy``; a go/stop rule follows ``stop=``: ``greedy:stop=stop``
(the default: always stop) or ``greedy:stop=threshold:k=3:gos=2:stock=4:margin=2``
(parameters of :class:`gostop.agents.go_stop.Threshold`: go while score < k, gos < gos, stock
>= stock, and no opponent within margin of the target).

``stop=ev`` is the expected-value rule: ``greedy:stop=ev:n=16:margin=1`` plays greedy
cards and goes only when determinized rollouts (``n`` samples) value going ``margin``
chips above stopping (a :class:`gostop.agents.search.SearchAgent` searching go/stop only).

``search`` is :class:`gostop.agents.search.SearchAgent`: ``search:n=64`` (samples per decision),
``at=gostop`` (search only go/stop decisions), ``seconds=0.5`` (time budget per decision),
``rollout=greedy|simple|random`` (default policy of the rollouts, greedy by default).

``model:NAME_OR_PATH`` is a trained network (:mod:`gostop.agents.learned`): a model folder, or
the name of a model shipped with the package (``model:ppo``).
"""

from __future__ import annotations

from pathlib import Path

from gostop_env.core import Rules
from gostop_env.policy import Policy, RandomPolicy

from .go_stop import make_go_stop_rule
from .greedy import Greedy, SimpleGreedy
from .learned import GoStopComposite, card_player_model, load_network
from .search import SearchAgent

CARD_PLAYERS = {"simple": SimpleGreedy, "greedy": Greedy}


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
            rule_params[key] = _integer(key, value)
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
        )
    if "n" in rule_params:
        raise ValueError("option 'n' belongs to the ev go/stop rule (stop=ev)")
    return CARD_PLAYERS[kind](go_stop=make_go_stop_rule(rule_kind, **rule_params), rules=rules)


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
    for option in options:
        key, equals, value = option.partition("=")
        if not equals or key not in ("n", "at", "seconds", "rollout"):
            raise ValueError(f"search option {option!r}: use n=<samples>, at=all|gostop, seconds=<s>, rollout=<agent>")
        settings[key] = value
    rollout = make_agent(settings.get("rollout", "greedy"), rules)
    seconds = float(settings["seconds"]) if "seconds" in settings else None
    return SearchAgent(
        samples=_integer("n", settings.get("n", "16")),
        rollout=rollout,
        at=settings.get("at", "all"),
        seconds=seconds,
        rules=rules,
    )


def _integer(key: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"option {key!r} needs an integer, got {value!r}") from None
