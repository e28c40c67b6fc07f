"""Go/stop studies: threshold-rule sweeps, rules compared head to head, and where going pays.

- :func:`threshold_rules` names a grid of threshold rules on a card player;
  :func:`versus` plays each of a list of agents against one reference agent over the same
  duplicate deals and returns chips per hand (95% interval), win rate, go rate and go
  success per agent: a threshold sweep is ``versus(threshold_rules(...), "greedy")``.
- :func:`value_dataset` plays hands, stops at every go/stop decision and estimates the
  value of going and of stopping there (:func:`gostop.agents.go_stop_value.go_stop_values`), next
  to the decision's features (:data:`gostop.agents.decisions.FEATURES`): the data for "where does
  going pay". :func:`advantage_by` averages the advantage of going over groups of a feature.
- :func:`match_go_rates` asks where a match stands changes the best choice: at the same
  decisions, how often the match-aware rule goes for each lead and number of hands left.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import product
from typing import Any

import numpy as np

from gostop_env.core import Rules
from gostop_env.core.deck import shuffled_decks

from .decisions import DecisionRecorder
from .go_stop_value import CHOICES, Z95, GoStopValues, go_stop_values
from .match import play_hands


def threshold_rules(
    card_player: str = "greedy",
    k: Iterable[int | None] = (None,),
    gos: Iterable[int | None] = (None, 1, 2, 3),
    stock: Iterable[int | None] = (None, 2, 4, 6, 8),
    margin: Iterable[int | None] = (None, 1, 3, 5),
) -> list[str]:
    """Agent names of every threshold rule in the grid (None leaves a condition out)."""
    names = []
    for values in product(k, gos, stock, margin):
        options = "".join(f":{key}={v}" for key, v in zip(("k", "gos", "stock", "margin"), values) if v is not None)
        names.append(f"{card_player}:stop=threshold{options}")
    return names


def versus(
    agents: Sequence[str],
    reference: str,
    deals: int,
    seed: int = 0,
    preset: str = "seed",
    workers: int = 1,
    progress: Callable[[Iterable], Iterable] | None = None,
) -> list[dict[str, Any]]:
    """Each agent against ``reference`` in 2-player duplicate deals (the same deals for all),
    best chips per hand first."""
    from .metrics import agent_figures
    from .tournament import TournamentConfig, run_tournament

    rows = []
    for name in progress(agents) if progress else agents:
        config = TournamentConfig((name, reference), 2, preset, deals, seed, workers=workers)
        figures = {f.agent: f for f in agent_figures(run_tournament(config))}[name]
        rows.append(
            {
                "agent": name,
                "deals": deals,
                "chips": figures.chips,
                "chips_ci": figures.chips_ci,
                "win_rate": figures.win_rate,
                "go_rate": figures.go_rate,
                "go_success": figures.go_success,
            }
        )
    return sorted(rows, key=lambda row: -row["chips"])


def value_dataset(
    rules: Rules, seat_policies: Sequence[Any], hands: int, samples: int, seed: int, perfect_information: bool = False
) -> dict[str, np.ndarray]:
    """Features and estimated go/stop values of every go/stop decision in ``hands`` hands played
    by ``seat_policies`` (values under the same policies; perfect-information values too
    when asked). Columns: those of :meth:`gostop.agents.decisions.DecisionRecorder.table` (features,
    what the policy chose, the outcome), ``go``, ``stop``, ``advantage``, ``advantage_half``
    (95%), each choice's payment distribution (``go_q10``, ``go_q50``, ``go_q90``,
    ``go_p_loss``, the same for ``stop``), and ``perfect_go``/``perfect_stop``."""
    return decision_values(rules, seat_policies, hands, samples, seed, perfect_information)[0]


def decision_values(
    rules: Rules, seat_policies: Sequence[Any], hands: int, samples: int, seed: int, perfect_information: bool = False
) -> tuple[dict[str, np.ndarray], GoStopValues]:
    """:func:`value_dataset`'s table, and the values it was made from (every sample's chips)."""
    rng = np.random.default_rng([seed, 3])
    recorder = DecisionRecorder(keep_states=True)
    batch = play_hands(
        rules, seat_policies, shuffled_decks(rules, np.random.default_rng([seed, 4]), hands), rng, before_step=recorder
    )
    table = recorder.table(batch)
    if not len(table["game"]):
        raise ValueError(f"no go/stop decision in {hands} hands: play more hands")
    decisions = recorder.states()
    values = go_stop_values(decisions, seat_policies, samples, rng)
    table.update(go=values.go, stop=values.stop, advantage=values.advantage, advantage_half=values.advantage_half)
    table.update(distribution_columns(values))
    if perfect_information:
        perfect = go_stop_values(decisions, seat_policies, samples, rng, perfect_information=True)
        table.update(perfect_go=perfect.go, perfect_stop=perfect.stop)
    return table, values


QUANTILES = (0.1, 0.5, 0.9)


def distribution_columns(values: GoStopValues) -> dict[str, np.ndarray]:
    """Per decision, each choice's payment quantiles (``go_q10``, ...) and probability of
    paying (``go_p_loss``, ``stop_p_loss``)."""
    columns = {}
    for choice in CHOICES:
        for level, column in zip(QUANTILES, values.quantiles(choice, QUANTILES).T, strict=True):
            columns[f"{choice}_q{round(100 * level)}"] = column
        columns[f"{choice}_p_loss"] = values.loss_probability(choice)
    return columns


def advantage_by(
    table: dict[str, np.ndarray], feature: str, bins: Sequence[float] | None = None
) -> list[dict[str, Any]]:
    """Mean advantage of going (with a 95% interval over decisions) per value of ``feature``,
    or per bin ``[bins[i], bins[i+1])``; also the share of decisions where going paid."""
    values = np.asarray(table[feature], np.float64)
    groups = np.digitize(values, bins) if bins is not None else values
    rows = []
    for group in np.unique(groups):
        advantage = np.asarray(table["advantage"])[groups == group]
        half = Z95 * advantage.std(ddof=1) / np.sqrt(len(advantage)) if len(advantage) > 1 else float("inf")
        label = _bin_label(bins, int(group)) if bins is not None else _plain(group)
        rows.append(
            {
                feature: label,
                "decisions": len(advantage),
                "advantage": float(advantage.mean()),
                "advantage_ci": (float(advantage.mean() - half), float(advantage.mean() + half)),
                "going_pays": float((advantage > 0).mean()),
            }
        )
    return rows


def _plain(value: np.floating) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


def _bin_label(bins: Sequence[float], group: int) -> str:
    low = bins[group - 1] if group > 0 else "-inf"
    high = bins[group] if group < len(bins) else "inf"
    return f"[{low}, {high})"


def match_go_rates(
    rules: Rules,
    seat_policies: Sequence[Any],
    hands: int,
    samples: int,
    seed: int,
    leads: Sequence[int] = (-60, -30, -15, -5, 0, 5, 15, 30, 60),
    hands_left: Sequence[int] = (0, 1, 3, 7),
) -> dict[str, np.ndarray]:
    """How the match-aware choice (:mod:`gostop.agents.match_stop`) moves with the match
    state: every go/stop decision of ``hands`` hands played by ``seat_policies`` is valued
    once (``samples`` determinized rollouts each, the same policies after it), then each
    decision is decided as if its seat led by each of ``leads`` chips with each of
    ``hands_left`` hands to play after this one. Columns (one row per grid point):
    ``hands_left``, ``lead``, ``go_rate`` (the share of decisions where it goes),
    ``ev_go_rate`` (where the chips' expected value says go, the same on every row) and
    ``decisions``. 2 players."""
    from .match_stop import TIES_GO, match_win_table

    table, values = decision_values(rules, seat_policies, hands, samples, seed)
    win = match_win_table(rules)
    ev_go = float((values.go > values.stop).mean())
    rows: dict[str, list[float]] = {"hands_left": [], "lead": [], "go_rate": [], "ev_go_rate": [], "decisions": []}
    for k, lead in product(hands_left, leads):
        go = win.value(k, lead, values.go_samples).mean(axis=1)
        stop = win.value(k, lead, values.stop_samples).mean(axis=1)
        goes = go - stop > TIES_GO  # as the rule decides: exact ties go
        for name, value in (("hands_left", k), ("lead", lead), ("go_rate", float(goes.mean()))):
            rows[name].append(value)
        rows["ev_go_rate"].append(ev_go)
        rows["decisions"].append(len(table["go"]))
    return {name: np.asarray(column) for name, column in rows.items()}
