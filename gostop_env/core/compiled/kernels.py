"""The kernel API: what code outside the core may build its own compiled kernels from.

Agents that play whole hands inside a kernel (``agents/compiled_greedy.py``) read and step a
compiled batch's state through these names, and only these: the rest of
:mod:`gostop_env.core.compiled` may change with the engine.

- **Arguments** a kernel takes from a :class:`CompiledGameBatch`: ``batch.kernel_state()``
  (the state, :data:`KernelState`), ``batch.rule_arguments()`` (the rule options and §5's
  match tables), ``batch.legal_bits`` (the legal words) and ``batch.chunks()`` (how many
  ranges of games its threads take). After stepping games in place, hand the batch its new
  legal words with ``batch.played_in_place(legal)``.
- **Reading a game**: :func:`at` (the flat index of game ``i``, seat ``p`` in a per-seat
  array), :func:`read_pile` (a pile's counts by kind), the phases (``PLAY``, ``GO_STOP``,
  ``DONE``, ...), the legal words' layout (``CHOOSE_SHIFT``, ``SHAKE_SHIFT``, ``BOMB_SHIFT``,
  ``BOMB_HIGH_SHIFT``) and the rule options' entries (``R_TARGET``, ...).
- **Stepping a game**: :func:`step_game` (one decision and the rest of the turn, then the
  legal words), with events written to :data:`EventArrays` made flat by :func:`flat_events`.
- **Bits**: :func:`bit`, :func:`popcount`, :func:`lowest_bit`.
- **Loops and compiling**: :func:`chunk` (a thread's range of games), :func:`compile_loop`
  (a ``prange`` loop for one thread or numba's threads), and numba_kit's ``jit`` and
  ``inline`` decorators, ``WITHOUT_RUNTIME`` and the ``uint64`` constants ``U``, ``U0``,
  ``U1``.
"""

from .arrays import EventArrays, KernelState, flat_events
from .backend import CompiledGameBatch
from .intrinsics import bit, lowest_bit, popcount
from .loops import compile_loop
from .numba_kit import U0, U1, WITHOUT_RUNTIME, U, inline, jit
from .rules import (
    BOMB_HIGH_SHIFT,
    BOMB_SHIFT,
    CHOOSE_SHIFT,
    DONE,
    GO_STOP,
    PLAY,
    R_TARGET,
    SHAKE_SHIFT,
    at,
    read_pile,
    step_game,
)
from .threads import chunk

__all__ = [
    "BOMB_HIGH_SHIFT",
    "BOMB_SHIFT",
    "CHOOSE_SHIFT",
    "DONE",
    "GO_STOP",
    "PLAY",
    "R_TARGET",
    "SHAKE_SHIFT",
    "U",
    "U0",
    "U1",
    "WITHOUT_RUNTIME",
    "CompiledGameBatch",
    "EventArrays",
    "KernelState",
    "at",
    "bit",
    "chunk",
    "compile_loop",
    "flat_events",
    "inline",
    "jit",
    "lowest_bit",
    "popcount",
    "read_pile",
    "step_game",
]
