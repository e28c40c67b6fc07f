"""Go/stop decision datasets: every go/stop decision of a set of hands, its features and outcome.

:class:`DecisionRecorder` is a ``before_step`` hook for :func:`gostop.agents.match.play_out`: at
each step it keeps the games whose seat is at a go/stop decision, with what that seat
knew (:data:`FEATURES`), and after the hands end :meth:`DecisionRecorder.table` adds the
choice and the outcome (:data:`OUTCOMES`). Opponents are numbered in turn order from the
deciding seat; the second opponent's columns are -1 in 2-player hands. Tournaments record
them with ``gostop tournament ... --decisions`` (``decisions.csv`` in the output folder);
:func:`save_table` writes CSV, or Parquet when the path ends in ``.parquet`` (pyarrow).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from gostop_env.core import GameBatch, Phase
from gostop_env.core import actions as A
from gostop_env.core import cards as C
from gostop_env.core.scoring import read_piles
from gostop_env.files import writable_file

FEATURES = (
    "turn",
    "score",
    "gos",
    "hand_size",
    "stock_left",
    "shakes",
    "bombs",
    "junk",
    "animals",
    "ribbons",
    "brights",
    "opponent1_score",
    "opponent1_gos",
    "opponent1_hand_size",
    "opponent1_junk",
    "opponent1_brights",
    "opponent2_score",
    "opponent2_gos",
    "opponent2_hand_size",
    "opponent2_junk",
    "opponent2_brights",
    "stop_chips",  # what stopping now pays this seat: the stake, every multiplier included
)
OUTCOMES = ("went", "chips", "won", "result")
"""``went``: 1 for go; ``chips``: what the seat won in the end; ``won``: 1 if it won the hand;
``result``: the hand's :class:`gostop_env.core.Result` code."""


def decision_features(batch: GameBatch, games: np.ndarray) -> dict[str, np.ndarray]:
    """:data:`FEATURES` of the seat to move in each of ``games`` (all at a go/stop decision)."""
    seat = batch.seat[games].astype(np.int64)
    players = batch.rules.players
    columns = {
        "turn": batch.turns[games, seat],
        "stock_left": batch.stock_len[games] - batch.stock_pos[games],
        "stop_chips": _stop_chips(batch, games, seat),
    }
    columns.update(_seat_columns(batch, games, seat, ""))
    for k in (1, 2):
        if k < players:
            other = _seat_columns(batch, games, (seat + k) % players, f"opponent{k}_")
        else:
            other = {f"opponent{k}_{name}": np.full(len(games), -1) for name in _OPPONENT_COLUMNS}
        columns.update({key: value for key, value in other.items() if key in FEATURES})
    return {name: np.asarray(columns[name], np.int64) for name in FEATURES}


_OPPONENT_COLUMNS = ("score", "gos", "hand_size", "junk", "brights")


def _seat_columns(batch: GameBatch, games: np.ndarray, seat: np.ndarray, prefix: str) -> dict[str, np.ndarray]:
    pile = batch.piles[games, seat]
    piles = read_piles(pile, batch.rules)
    return {
        f"{prefix}score": batch.scores[games, seat],
        f"{prefix}gos": batch.gos[games, seat],
        f"{prefix}hand_size": np.bitwise_count(batch.hands[games, seat]),
        f"{prefix}shakes": batch.shakes[games, seat],
        f"{prefix}bombs": batch.bombs[games, seat],
        f"{prefix}junk": piles["junk"],
        f"{prefix}animals": piles["animals"],
        f"{prefix}ribbons": np.bitwise_count(pile & np.uint64(C.RIBBONS)),
        f"{prefix}brights": piles["brights"],
    }


def _stop_chips(batch: GameBatch, games: np.ndarray, seat: np.ndarray) -> np.ndarray:
    stopped = batch.select(games)
    stopped.step(np.full(len(games), A.STOP, np.int64))
    return stopped.payments[np.arange(len(games)), seat]


class DecisionRecorder:
    """Collects go/stop decisions while hands are played (a ``play_out`` ``before_step`` hook).
    With ``keep_states``, also the games at each decision, for :meth:`states`."""

    def __init__(self, keep_states: bool = False) -> None:
        self._parts: list[dict[str, np.ndarray]] = []
        self._states: list[GameBatch] | None = [] if keep_states else None

    def __call__(self, batch: GameBatch, actions: np.ndarray) -> None:
        games = np.flatnonzero((batch.phase == Phase.GO_STOP) & (actions >= 0))
        if games.size:
            part = decision_features(batch, games)
            part.update(
                game=games, seat=batch.seat[games].astype(np.int64), went=(actions[games] == A.GO).astype(np.int64)
            )
            self._parts.append(part)
            if self._states is not None:
                self._states.append(batch.select(games))

    def states(self) -> GameBatch:
        """The recorded decisions as one batch of games at a go/stop decision, in table order."""
        if self._states is None:
            raise ValueError("states are kept only by DecisionRecorder(keep_states=True)")
        if not self._states:
            raise ValueError("no go/stop decision was recorded")
        return GameBatch.concatenate(self._states)

    def table(self, batch: GameBatch) -> dict[str, np.ndarray]:
        """Every recorded decision with its outcome in the finished ``batch``: columns ``game``,
        ``seat``, :data:`FEATURES`, :data:`OUTCOMES`."""
        names = ("game", "seat", *FEATURES, "went")
        rows = {
            name: np.concatenate([p[name] for p in self._parts]) if self._parts else np.zeros(0, np.int64)
            for name in names
        }
        game, seat = rows["game"], rows["seat"]
        rows.update(
            chips=batch.payments[game, seat].astype(np.int64),
            won=(batch.winner[game] == seat).astype(np.int64),
            result=batch.result[game].astype(np.int64),
        )
        return rows


def check_table_path(path: str | Path) -> Path:
    """``path`` once :func:`save_table` can write there: a ``.csv`` or ``.parquet`` file name
    in a writable place (and pyarrow installed for Parquet); ValueError otherwise."""
    path = writable_file(path, (".csv", ".parquet"))
    if path.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ValueError("Parquet needs pyarrow (pip install pyarrow); or save as .csv") from None
    return path


def save_table(table: dict[str, np.ndarray | list], path: str | Path) -> Path:
    """Write a column table as CSV, or as Parquet for a ``.parquet`` path (needs pyarrow)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".parquet":
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise ValueError("Parquet needs pyarrow (pip install pyarrow); or save as .csv") from None
        pq.write_table(pa.table({k: list(v) for k, v in table.items()}), path)
        return path
    names = list(table)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(names)
        writer.writerows(zip(*(table[name] for name in names)))
    return path


def load_table(path: str | Path) -> dict[str, np.ndarray]:
    """Read a table written by :func:`save_table` (numbers as int64 or float64, text kept)."""
    path = Path(path)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return {k: np.asarray(v) for k, v in pq.read_table(path).to_pydict().items()}
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    return {name: _column([row[i] for row in rows[1:]]) for i, name in enumerate(rows[0])}


def _column(values: list[str]) -> np.ndarray:
    for kind in (np.int64, np.float64):
        try:
            return np.asarray(values, dtype=kind) if values else np.zeros(0, kind)
        except ValueError:
            continue
    return np.asarray(values)
