"""What a rule-based agent reads from its observations: the ``vector`` encoding decoded.

Agents see only what the observation holds (public information and their own hand), so
they can never read hidden cards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gostop_env.core import Phase
from gostop_env.encodings import SCALE, decode_boards, section_slices

_SLICES = section_slices("vector")


@dataclass
class View:
    """A batch of decoded ``vector`` observations (one row per decision)."""

    boards: dict[str, np.ndarray]  # card sections as uint64 bitboards
    scores: np.ndarray  # (n, 3): viewer, opponent 1, opponent 2
    gos: np.ndarray  # (n, 3)
    hand_sizes: np.ndarray  # (n, 3)
    stock_size: np.ndarray  # (n,)
    target: np.ndarray  # (n,)
    phase: np.ndarray  # (n,) Phase codes

    @classmethod
    def of(cls, observations: np.ndarray) -> View:
        obs = np.asarray(observations, np.float32)
        counter = lambda name: np.rint(obs[:, _SLICES[name]] * SCALE[name]).astype(np.int64)  # noqa: E731
        return cls(
            boards=decode_boards(obs),
            scores=counter("score"),
            gos=counter("gos"),
            hand_sizes=counter("hand_size"),
            stock_size=counter("stock_size")[:, 0],
            target=counter("target")[:, 0],
            phase=obs[:, _SLICES["phase"]].argmax(axis=1),
        )

    def at_go_stop(self) -> np.ndarray:
        return self.phase == Phase.GO_STOP
