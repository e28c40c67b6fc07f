"""The rules core: pure NumPy and Python, no gymnasium or pettingzoo.

- :mod:`.cards`: the card catalogue (docs/rules.md §1).
- :mod:`.rules`: :class:`Rules` and the presets (§12).
- :mod:`.deck`: deal slices, deck validation, seeded shuffles (§2, §3).
- :mod:`.actions`: the 125 action ids and the decision phases (§11).
- :mod:`.events`: what a step reports; :mod:`.outcomes`: how a hand ended (``Result``) and
  what the card from hand did (``Outcome``), shared by both engines.
- :mod:`.scoring`: §7 scoring, the reference's set reading beside the core's bitboards.
- :mod:`.bitboard`: sets of cards as ``uint64`` bitboards, and their helpers.
- :mod:`.reference`: the one-game reference engine, the executable rule book.
- :mod:`.state`: the batched core's state arrays, declared once (:class:`~.state.GameState`).
- :mod:`.numpy_engine`: the rules as NumPy operations on every game of a batch at once.
- :mod:`.batch`: the batched core's API, :class:`GameBatch`.
- :mod:`.match`: matches, hands in a row between the same players (:class:`~.match.MatchBatch`).
- :mod:`.backends`: which engines can step a batch, and the choice of one.
- :mod:`.compiled`: the compiled backend (numba, the ``fast`` extra), loaded when asked for.
- :mod:`.indices`: game indices checked before any engine reads them.
"""

from .actions import NUM_ACTIONS, IllegalActionError, Phase, action_name
from .backends import available_backends, default_backend
from .batch import GameBatch, batch_class, random_legal_actions
from .cards import card_name
from .events import Event, Events
from .outcomes import Result
from .reference import ReferenceGame
from .rules import Rules

__all__ = [
    "NUM_ACTIONS",
    "Event",
    "Events",
    "GameBatch",
    "IllegalActionError",
    "Phase",
    "ReferenceGame",
    "Result",
    "Rules",
    "action_name",
    "available_backends",
    "batch_class",
    "card_name",
    "default_backend",
    "random_legal_actions",
]
