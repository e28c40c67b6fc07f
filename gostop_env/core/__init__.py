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
- :mod:`.batch`: the vectorised core, :class:`GameBatch`, and the choice of backend.
- :mod:`.compiled`: the compiled backend (numba, the ``fast`` extra), loaded when asked for;
  :mod:`.pcg64`: NumPy's PCG64 draws made inside its kernels; :mod:`.numba_kit`: numba's
  settings and typed constants both share.
"""

from .actions import NUM_ACTIONS, IllegalActionError, Phase, action_name
from .batch import GameBatch, available_backends, batch_class, default_backend, random_legal_actions
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
