"""Choosing a backend, and the compiled backend's own entry points held equal to the NumPy core.

The rules themselves are held equal across engines by ``test_differential.py`` and
``test_scenarios.py``; here: the choice of backend (arguments, environment variable,
errors), dealing again in place, the batch operations, and the compiled action picker.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import BACKENDS, needs_numba
from lockstep import play_lockstep, same_arrays

from gostop_env.core import GameBatch, IllegalActionError, Phase, Rules, random_legal_actions
from gostop_env.core.backends import BACKEND_VARIABLE, available_backends, default_backend
from gostop_env.core.backends import BACKENDS as ALL_BACKENDS
from gostop_env.core.deck import shuffled_decks
from gostop_env.core.state import STATE_FIELDS


def test_unknown_backend_is_refused_by_name():
    with pytest.raises(ValueError, match="backend must be one of numpy, numba, numba-parallel; got 'jax'"):
        GameBatch.from_seed(Rules(), 0, 2, backend="jax")


def test_environment_variable_chooses_the_default_backend(monkeypatch):
    monkeypatch.setenv(BACKEND_VARIABLE, "numpy")
    assert default_backend() == "numpy"
    assert GameBatch.from_seed(Rules(), 0, 2).backend == "numpy"
    monkeypatch.setenv(BACKEND_VARIABLE, "fortran")
    with pytest.raises(ValueError, match=r"\$GOSTOP_BACKEND must be one of .*; got 'fortran'"):
        GameBatch.from_seed(Rules(), 0, 2)


def test_default_is_the_fastest_backend_installed(monkeypatch):
    monkeypatch.delenv(BACKEND_VARIABLE, raising=False)
    assert default_backend() == ("numba" if "numba" in available_backends() else "numpy")
    assert available_backends() in (ALL_BACKENDS, ALL_BACKENDS[:1])


def test_core_imports_without_numba():
    """Numba loads only when a compiled backend is asked for."""
    code = (
        "import sys, gostop_env.core as core; core.GameBatch.from_seed(core.Rules(), 0, 2, backend='numpy');"
        "print('numba' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@needs_numba
@pytest.mark.parametrize("backend", ALL_BACKENDS[1:])
def test_batch_operations_keep_the_backend(backend):
    batch, twin = (GameBatch.from_seed(Rules(players=3), 3, 6, backend=b) for b in (backend, "numpy"))
    operations = (
        lambda b: b.select([0, 2]),
        lambda b: b.clone(),
        lambda b: GameBatch.concatenate([b, b.select(slice(1, 3))]),
    )
    for operation in operations:
        part, numpy_part = operation(batch), operation(twin)
        assert part.backend == backend
        for _ in range(10):
            actions = random_legal_actions(numpy_part.legal_bits, np.random.default_rng(1), "numpy")
            same_arrays([numpy_part, part], [numpy_part.step(actions), part.step(actions)])


@needs_numba
@pytest.mark.parametrize("players", (2, 3))
def test_dealing_again_in_place_matches_the_numpy_core(players):
    """Many hands dealt into finished games (carry and all) on both batch backends."""
    rules = Rules.preset("korean", players=players, jokers=2)
    rng = np.random.default_rng(players)
    decks = shuffled_decks(rules, rng, 256)
    batches = [GameBatch.from_decks(rules, decks, backend=b) for b in BACKENDS]
    dealt = 0
    for step in range(400):
        actions = random_legal_actions(batches[0].legal_bits, rng, "numpy")
        same_arrays(batches, [b.step(actions) for b in batches])
        done = np.flatnonzero(batches[0].done)
        if step % 5 == 0 and done.size:
            fresh = shuffled_decks(rules, rng, done.size)
            carry = batches[0].next_carry[done]
            events = [b.reset_games(done, fresh, carry) for b in batches]
            legal_before = [b.legal_bits for b in batches]  # read before and after a deal: both fresh
            same_arrays(batches, events)
            assert all((x == batches[0].legal_bits).all() for x in legal_before)
            dealt += done.size
    assert dealt > 1000


@needs_numba
def test_deals_in_a_batch_large_enough_to_ask_for_cache_lines_ahead():
    """From ``PREFETCH_FROM`` games on, a deal asks for the rows of the games it deals next
    before it writes them; the games come out as the NumPy core's (3 players and a joker:
    the longest rows of every per-seat and events array)."""
    from gostop_env.core.compiled.deal import PREFETCH_FROM

    rules = Rules.preset("korean", players=3, jokers=1)
    rng = np.random.default_rng(5)
    batches = [GameBatch.from_seed(rules, 5, PREFETCH_FROM, backend=b) for b in BACKENDS]
    dealt = 0
    for _ in range(40):
        actions = random_legal_actions(batches[0].legal_bits, rng, "numpy")
        same_arrays(batches, [b.step(actions) for b in batches])
        done = np.flatnonzero(batches[0].done)
        if done.size:
            fresh, carry = shuffled_decks(rules, rng, done.size), batches[0].next_carry[done]
            same_arrays(batches, [b.reset_games(done, fresh, carry) for b in batches])
            dealt += done.size
    assert dealt > 1000


@needs_numba
def test_code_written_from_the_state_declaration_names_every_state_array():
    """``per_field`` writes one statement per kernel state array, by its declared shape, in
    declaration order, leaving out only those asked: how ``reset_game`` and ``prefetch_deal``
    are written, so that a new field cannot be left out of a deal."""
    from gostop_env.core.compiled.arrays import KERNEL_FIELDS, per_field
    from gostop_env.core.state import GAME, MONTH, SEAT, STOCK

    lines = per_field({shape: f"{shape} {{name}}" for shape in (GAME, SEAT, MONTH, STOCK)}, skip=("stock",))
    written = [line.split() for line in lines.splitlines()]
    assert [name for _, name in written] == [name for name in KERNEL_FIELDS if name != "stock"]
    assert all(shape == STATE_FIELDS[name].shape for shape, name in written)


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize("players", (2, 3))
def test_a_deal_leaves_nothing_of_the_game_before(backend, players):
    """Every state array of a dealt game is reset, whatever it held: games whose arrays were
    all scribbled over, dealt again, equal the same decks dealt into a new batch (scratch
    arrays, named ``_*``, aside: they mean nothing between steps)."""
    rules = Rules.preset("korean", players=players, jokers=2)
    rng = np.random.default_rng(players)
    decks = shuffled_decks(rules, rng, 16)
    batch = GameBatch.from_seed(rules, rng, 16, backend=backend)
    for name in STATE_FIELDS:
        array = getattr(batch, name)
        array[...] = rng.integers(1, 100, array.shape)
    batch.reset_games(np.arange(16), decks, carry=2)
    fresh = GameBatch.from_decks(rules, decks, carry=2, backend=backend)
    for name in STATE_FIELDS:
        assert name.startswith("_") or (getattr(batch, name) == getattr(fresh, name)).all(), name
    assert (batch.legal_bits == fresh.legal_bits).all()


@pytest.mark.parametrize("backend", available_backends())
def test_legal_words_a_caller_holds_keep_their_values(backend):
    """``legal_bits`` read before a step, or between a step and a deal, keeps its values
    (a batch writes its new words elsewhere), and the batch's own words are always those
    found afresh, also where a deal rewrote them in place (none read since the step)."""
    rules = Rules()
    rng = np.random.default_rng(5)
    batch = GameBatch.from_seed(rules, rng, 64, backend=backend)
    for step in range(300):
        held = batch.legal_bits
        kept = held.copy()
        batch.step(random_legal_actions(held, rng, backend))
        between = batch.legal_bits.copy() if step % 2 else None
        read_between = batch.legal_bits if step % 2 else None
        done = np.flatnonzero(batch.done)
        if done.size:
            batch.reset_games(done, shuffled_decks(rules, rng, done.size))
        assert (held == kept).all()
        assert read_between is None or (read_between == between).all()
        assert (batch.legal_bits == batch.clone().legal_bits).all()


@needs_numba
@pytest.mark.parametrize("backend", ALL_BACKENDS[1:])
def test_kernels_are_called_with_the_types_they_were_compiled_for(backend, monkeypatch):
    """``run_kernel`` calls a kernel's compiled entry point without numba's typing of the
    arguments: every call, from batches made and fed every way (read-only decks, strided
    and other-typed actions and indices, state arrays replaced by non-contiguous, read-only
    or other-typed ones), passes exactly the types the entry point was compiled for; and
    the games stay equal to the NumPy core's."""
    from gostop_env.core.compiled import backend as compiled
    from gostop_env.core.compiled import loops

    called = set()

    def checked(kernel, *args):
        if kernel not in called:  # found afresh, from this test's arguments
            loops.ENTRY_POINTS.pop(kernel, None)
        real_run_kernel(kernel, *args)
        entry = loops.ENTRY_POINTS[kernel]
        (signature,) = [sig for sig, result in kernel.overloads.items() if result.entry_point is entry]
        assert tuple(kernel.typeof_pyval(a) for a in args) == signature, kernel
        called.add(kernel)

    real_run_kernel = compiled.run_kernel
    monkeypatch.setattr(compiled, "run_kernel", checked)
    rules = Rules.preset("korean", players=3, jokers=2)
    rng = np.random.default_rng(9)
    decks = shuffled_decks(rules, rng, 12)
    decks.flags.writeable = False
    batches = [GameBatch.from_decks(rules, decks, carry=1, backend=b) for b in ("numpy", backend)]
    replaced = {
        "scores": lambda a: a.astype(np.int64),
        "hands": lambda a: np.asfortranarray(a),
        "layout": lambda a: np.repeat(a, 2)[::2],
        "phase": lambda a: np.require(a, requirements="C").copy(),
    }
    for step in range(150):
        if step == 40:
            batches = [b.select(np.arange(11, -1, -1)) for b in batches]
        if step == 60:  # the same values, in arrays the kernels cannot take as they are
            for b in batches:
                for name, replace in replaced.items():
                    setattr(b, name, replace(getattr(b, name)))
            batches[1].phase.flags.writeable = False  # in place, after it was set
        wide = np.repeat(random_legal_actions(batches[0].legal_bits, rng, "numpy"), 2)
        actions = wide[::2] if step % 2 else wide[::2].astype(np.int32)
        for b in batches:
            b.step(actions)
        done = np.flatnonzero(batches[0].done)
        if done.size:
            index = np.repeat(done, 2)[::2]
            fresh = shuffled_decks(rules, rng, done.size).astype(np.int64 if step % 2 else np.int8)
            fresh.flags.writeable = False
            carry = batches[0].next_carry[done]
            for b in batches:
                b.reset_games(index, fresh, carry)
    same_arrays(batches, [b.deal_events for b in batches])
    assert {k.py_func.__name__.removesuffix("_parallel") for k in called} == {
        "_step_games",
        "_deal_games",
        "_legal_of_all",
    }


@pytest.mark.parametrize("backend", available_backends())
def test_state_arrays_set_strided_or_other_typed_keep_every_write(backend):
    """A state array replaced by a strided, Fortran-ordered or other-typed one is kept as a
    C-contiguous array of its own dtype: the core writes the per-seat arrays through flat
    views, which a strided array would have turned into copies that drop the writes. The
    batch plays on exactly as an untouched twin; a wrong number of axes is refused."""
    rules = Rules.preset("korean", players=3, jokers=1)
    batch = GameBatch.from_seed(rules, 4, 16, backend=backend)
    twin = batch.clone()
    given = np.asfortranarray(batch.hands)
    batch.hands = given
    batch.scores = batch.scores.astype(np.int64)
    batch.layout = np.repeat(batch.layout, 2)[::2]
    assert batch.hands is not given and batch.hands.flags.c_contiguous and batch.scores.dtype == np.int16
    rng = np.random.default_rng(4)
    for _ in range(60):
        actions = random_legal_actions(twin.legal_bits, rng, "numpy")
        same_arrays([twin, batch], [twin.step(actions), batch.step(actions)])
        done = np.flatnonzero(twin.done)
        if done.size:
            decks = shuffled_decks(rules, rng, done.size)
            same_arrays([twin, batch], [twin.reset_games(done, decks), batch.reset_games(done, decks)])
    with pytest.raises(ValueError, match=r"state array hands needs 2 axes, got shape \(48,\)"):
        batch.hands = batch.hands.reshape(-1)


@pytest.mark.parametrize("backend", available_backends())
def test_the_first_illegal_action_is_named_and_nothing_changes(backend):
    """With illegal actions in several games (in different threads' chunks too), the error
    names the first, no game has moved, and the next legal step is as if none had come."""
    batch = GameBatch.from_seed(Rules(), 4, 64, backend=backend)
    before = batch.clone()
    legal = random_legal_actions(batch.legal_bits, np.random.default_rng(0), backend)
    for bad in ([50, 60], [5, 60], [63]):
        actions = legal.copy()
        actions[bad] = 200
        with pytest.raises(IllegalActionError, match=f"game {bad[0]}: illegal action 200"):
            batch.step(actions)
        assert all((getattr(batch, name) == getattr(before, name)).all() for name in STATE_FIELDS)
    twin = before.clone()  # never given an illegal action
    batch.step(legal)
    twin.step(legal)
    assert all((getattr(batch, name) == getattr(twin, name)).all() for name in STATE_FIELDS)


@needs_numba
def test_small_batches_of_numba_parallel_run_on_one_thread(monkeypatch):
    """Below ``parallel_from`` games the threads would cost more than they save: the batch and
    its action picker take the one-thread loops, from it on numba's threads; the picker draws
    its numbers on the threads from ``kernel_draws_from`` games on."""
    import numba

    from gostop_env.core.compiled import ParallelGameBatch
    from gostop_env.core.compiled.loops import PARALLEL, SERIAL

    monkeypatch.setattr(ParallelGameBatch, "parallel_from", 100)
    monkeypatch.setattr(ParallelGameBatch, "kernel_draws_from", 200)
    small, large, larger = (GameBatch.from_seed(Rules(), 0, n, backend="numba-parallel") for n in (99, 100, 200))
    assert small.loops() is SERIAL and small.chunks() == 1
    assert large.loops() is PARALLEL and large.chunks() == numba.get_num_threads()
    picked = []
    monkeypatch.setattr(
        "gostop_env.core.compiled.backend.random_actions", lambda bits, draws, loops: picked.append(loops)
    )
    monkeypatch.setattr(
        "gostop_env.core.compiled.backend.drawn_actions",
        lambda bits, rng, loops, chunks: picked.append((loops, chunks)),
    )
    for batch in (small, large, larger):
        random_legal_actions(batch.legal_bits, np.random.default_rng(0), "numba-parallel")
    assert picked == [SERIAL, PARALLEL, (PARALLEL, numba.get_num_threads())]


@needs_numba
def test_dealing_no_games_changes_nothing():
    """An empty ``reset_games`` returns empty events and leaves every game as it was."""
    rules = Rules()
    batches = [GameBatch.from_seed(rules, 3, 8, backend=b) for b in BACKENDS]
    before = [b.clone() for b in batches]
    events = [b.reset_games([], np.zeros((0, rules.deck_size), np.int8)) for b in batches]
    assert all(e.counts.shape == (0, rules.players, events[0].counts.shape[2]) for e in events)
    assert all(e.payments.shape == (0, rules.players) for e in events)
    for batch, old in zip(batches, before, strict=True):
        assert all((getattr(batch, name) == getattr(old, name)).all() for name in STATE_FIELDS)
        assert (batch.legal_bits == old.legal_bits).all()


@needs_numba
def test_rebalance_moves_each_bound_halfway_toward_equal_times():
    """After a step the bounds between the threads' ranges move halfway toward where the
    ranges' rates would have finished them together; they stay where a time is missing,
    and no range falls below its least share."""
    from gostop_env.core.compiled.threads import MIN_SHARE, rebalance

    bounds = np.array([0, 50, 100], np.int64)
    rebalance(bounds, np.array([100, 50], np.int64))  # range 0 ran at half range 1's rate
    assert bounds.tolist() == [0, (50 + 100 // 3) // 2, 100]
    bounds = np.array([0, 30, 60, 90], np.int64)
    rebalance(bounds, np.array([30, 30, 30], np.int64))  # equal rates: already even
    assert bounds.tolist() == [0, 30, 60, 90]
    for elapsed in ([0, 40], [-5, 40]):  # no tick counter, or a thread moved between cores
        bounds = np.array([0, 40, 100], np.int64)
        rebalance(bounds, np.array(elapsed, np.int64))
        assert bounds.tolist() == [0, 40, 100]
    bounds = np.array([0, 50, 100], np.int64)
    for _ in range(20):  # range 0 a thousand times slower: it keeps its least share
        rebalance(bounds, np.array([1000 * (bounds[1] - bounds[0]), bounds[2] - bounds[1]], np.int64))
    assert bounds.tolist() == [0, 100 // (MIN_SHARE * 2), 100]


@needs_numba
def test_uneven_thread_ranges_change_no_result(monkeypatch):
    """Whatever the bounds between the threads' ranges (here three ranges, the first two of
    one game each at first), every array equals the one-thread backend's, and the first
    illegal action is still the one named."""
    from gostop_env.core.compiled import ParallelGameBatch
    from gostop_env.core.compiled.intrinsics import HAS_TICKS

    monkeypatch.setattr(ParallelGameBatch, "chunks", lambda self: 3)
    rules = Rules.preset("korean", players=3, jokers=1)
    batches = [GameBatch.from_seed(rules, 11, 48, backend=b) for b in ("numba", "numba-parallel")]
    bounds, _ = batches[1]._thread_ranges()
    bounds[:] = [0, 1, 2, 48]
    rng = np.random.default_rng(11)
    for _ in range(150):
        actions = random_legal_actions(batches[0].legal_bits, rng, "numba")
        same_arrays(batches, [b.step(actions) for b in batches])
        done = np.flatnonzero(batches[0].done)
        if done.size:
            decks = shuffled_decks(rules, rng, done.size)
            same_arrays(batches, [b.reset_games(done, decks) for b in batches])
    assert bounds[-1] == 48 and (np.diff(bounds) >= 1).all()
    assert (bounds.tolist() != [0, 1, 2, 48]) == HAS_TICKS  # moved where the kernels read ticks
    mask = batches[1].legal_action_mask()
    playing = np.flatnonzero(mask.any(axis=1))
    bad = np.full(48, -1)
    for game in playing[-2:]:  # two illegal actions: the first is named
        bad[game] = np.flatnonzero(~mask[game])[0]
    with pytest.raises(IllegalActionError, match=f"game {playing[-2]}: "):
        batches[1].step(bad)


@needs_numba
def test_parallel_backend_matches_every_engine():
    """The compiled loops spread over threads: every array equal to the other engines'."""
    rules = Rules.preset("korean", players=3, jokers=1)
    play_lockstep(rules, 1000, seed=77, backends=("numpy", "numba-parallel"))


@needs_numba
@pytest.mark.parametrize("players", (2, 3))
def test_compiled_action_picker_picks_what_numpy_picks(players):
    rules = Rules.preset("seed", players=players, jokers=2)
    batch = GameBatch.from_seed(rules, 5, 512, backend="numpy")
    for step in range(60):
        picks = [random_legal_actions(batch.legal_bits, np.random.default_rng(step), b) for b in ALL_BACKENDS]
        assert all((p == picks[0]).all() for p in picks[1:])
        batch.step(picks[0])
    assert batch.done.any()


@needs_numba
@pytest.mark.parametrize("games", (0, 1, 5, 3001))
def test_draws_made_in_the_kernel_are_numpys_own(games):
    """The picker that draws its own numbers (each range of games from the PCG64 state jumped
    ahead to it) picks what NumPy's draws pick, however many ranges, and leaves the generator
    as ``Generator.random`` leaves it: its buffered 32-bit draw too, so later draws agree."""
    from gostop_env.core.compiled.loops import PARALLEL, SERIAL
    from gostop_env.core.compiled.picker import drawn_actions

    rules = Rules.preset("seed", players=3, jokers=2)
    batch = GameBatch.from_seed(rules, 8, max(games, 1), backend="numpy")
    for _ in range(7):  # some games past their first decision, a few over
        batch.step(random_legal_actions(batch.legal_bits, np.random.default_rng(1), "numpy"))
    bits = batch.legal_bits[:games]
    for chunks, loops in ((1, SERIAL), (2, PARALLEL), (3, PARALLEL), (7, PARALLEL)):
        numpy_rng, kernel_rng = np.random.default_rng(chunks), np.random.default_rng(chunks)
        for rng in (numpy_rng, kernel_rng):
            rng.integers(10, dtype=np.int32)  # leaves half a 64-bit draw buffered
        expected = random_legal_actions(bits, numpy_rng, "numpy")
        assert (drawn_actions(bits, kernel_rng, loops, chunks) == expected).all()
        assert kernel_rng.bit_generator.state == numpy_rng.bit_generator.state
        assert (
            kernel_rng.integers(1 << 30, size=3, dtype=np.int32).tolist()
            == numpy_rng.integers(1 << 30, size=3, dtype=np.int32).tolist()
        )


@needs_numba
@pytest.mark.parametrize("bit_generator", (np.random.Philox, np.random.MT19937, np.random.PCG64DXSM))
def test_draws_from_other_bit_generators_are_made_by_numpy(bit_generator):
    """A generator on another bit generator than PCG64 draws through NumPy: the same picks."""
    from gostop_env.core.compiled.loops import PARALLEL
    from gostop_env.core.compiled.picker import drawn_actions

    bits = GameBatch.from_seed(Rules(), 2, 3000, backend="numpy").legal_bits
    numpy_rng, kernel_rng = (np.random.Generator(bit_generator(4)) for _ in range(2))
    expected = random_legal_actions(bits, numpy_rng, "numpy")
    assert (drawn_actions(bits, kernel_rng, PARALLEL, 2) == expected).all()
    assert kernel_rng.random() == numpy_rng.random()


@needs_numba
def test_pcg64_jumps_ahead_as_numpy_advances():
    """The kernels' jump ahead of a PCG64 state against NumPy's own ``advance``."""
    from gostop_env.core.compiled import pcg64

    for draws in (0, 1, 2, 3, 1000, 65537, 2**40 + 7):
        bit_generator = np.random.PCG64(draws)
        words, _ = pcg64.state_words(bit_generator)
        high, low = pcg64.jump(*words, draws)
        bit_generator.advance(draws)
        assert (int(high) << 64 | int(low)) == bit_generator.state["state"]["state"]


@needs_numba
@pytest.mark.parametrize("players", (2, 3))
def test_threaded_action_picker_picks_what_numpy_picks(players):
    """At a batch large enough for numba's threads to draw in the kernel: the same picks as
    the NumPy core's and the one-thread backend's, and the generators left alike."""
    from gostop_env.core.compiled.picker import KERNEL_DRAWS_FROM

    rules = Rules.preset("seed", players=players, jokers=2)
    batch = GameBatch.from_seed(rules, 5, KERNEL_DRAWS_FROM + 3, backend="numpy")
    rngs = {backend: np.random.default_rng(players) for backend in ALL_BACKENDS}
    for _ in range(30):
        picks = {backend: random_legal_actions(batch.legal_bits, rng, backend) for backend, rng in rngs.items()}
        assert all((p == picks["numpy"]).all() for p in picks.values())
        assert len({str(rng.bit_generator.state) for rng in rngs.values()}) == 1
        batch.step(picks["numpy"])


@pytest.mark.parametrize("backend", available_backends())
def test_done_games_lists_the_games_that_are_over(backend, monkeypatch):
    """``done_games`` is ``np.flatnonzero(done)`` on every backend: none, some and all games
    over, over uneven thread ranges too (three ranges, the first of one game)."""
    if backend == "numba-parallel":
        from gostop_env.core.compiled import ParallelGameBatch

        monkeypatch.setattr(ParallelGameBatch, "parallel_from", 1)
        monkeypatch.setattr(ParallelGameBatch, "chunks", lambda self: 3)
    batch = GameBatch.from_seed(Rules(), 6, 300, backend=backend)
    if backend == "numba-parallel":
        batch._thread_ranges()[0][:] = [0, 1, 150, 300]
    over = np.random.default_rng(6).random(300) < 0.3
    for phase in (np.full(300, int(Phase.PLAY)), np.where(over, int(Phase.DONE), 0), np.full(300, int(Phase.DONE))):
        batch.phase[:] = phase
        assert batch.done_games().tolist() == np.flatnonzero(phase == int(Phase.DONE)).tolist()
    assert batch.select(np.zeros(0, np.int64)).done_games().tolist() == []


@needs_numba
def test_compiled_bit_helpers_match_plain_python():
    """The LLVM bit intrinsics and both rank-selects (``pdep`` where the CPU has BMI2, the
    loop everywhere) against plain Python on random words, 0 and the top bit included."""
    from gostop_env.core.compiled import intrinsics as K

    rng = np.random.default_rng(9)
    words = [0, 1, 1 << 63, (1 << 64) - 1, *(int(w) for w in rng.integers(0, 2**63, 300, dtype=np.uint64))]
    selects = [K.select_bit_by_loop] + ([K.select_bit_by_pdep] if K.HAS_PDEP else [])
    for word in words:
        w = np.uint64(word)
        set_bits = [b for b in range(64) if word >> b & 1]
        assert K.popcount(w) == len(set_bits)
        assert K.bit_index(w) == (set_bits[0] if set_bits else 64)
        assert int(K.highest_bit(w)) == (1 << set_bits[-1] if set_bits else 0)
        for rank in (0, len(set_bits) // 2, max(len(set_bits) - 1, 0)):
            for select in selects:
                assert select(w, rank) == (set_bits[rank] if set_bits else 64)


# ---- the engine chosen explicitly ---------------------------------------------------------------
@pytest.mark.parametrize("backend", available_backends())
def test_every_runner_of_the_core_takes_its_engine(backend, tmp_path):
    from gostop.agents import compare, make_agent
    from gostop.agents.tournament import TournamentConfig
    from gostop.train.cli import main
    from gostop.train.config import TrainConfig
    from gostop_env.gym_env import GoStopEnv
    from gostop_env.learner_games import LearnerGames

    rules = Rules.preset("seed", players=2)
    env = GoStopEnv(backend=backend)
    env.reset(seed=1)
    assert env.batch.backend == backend
    games = LearnerGames(4, backend=backend)
    games.start()
    assert games.batch.backend == backend
    greedy = make_agent("greedy", rules)
    assert compare(greedy, make_agent("random", rules), 20, backend=backend).deals == 20
    assert TournamentConfig(("greedy", "random"), deals=10, backend=backend).key()
    assert TrainConfig.load("smoke", [f"core.backend='{backend}'"]).core.backend == backend
    assert main(["simulate", "--hands", "20", "--backend", backend]) == 0


def test_an_unknown_engine_is_named_everywhere(capsys):
    from gostop.agents.tournament import TournamentConfig
    from gostop.train.cli import main
    from gostop.train.config import TrainConfig
    from gostop_env.gym_env import GoStopEnv
    from gostop_env.learner_games import LearnerGames

    for make in (
        lambda: GoStopEnv(backend="jax"),
        lambda: LearnerGames(2, backend="jax"),
        lambda: TournamentConfig(("greedy", "random"), backend="jax"),
        lambda: TrainConfig.load("smoke", ["core.backend='jax'"]),
    ):
        with pytest.raises(ValueError, match="jax"):
            make()
    with pytest.raises(SystemExit):
        main(["compare", "greedy", "random", "--backend", "jax"])
    assert "jax" in capsys.readouterr().err


# ---- fresh deals from the batch's own generator ---------------------------------------------------
@pytest.mark.parametrize("preset, players, jokers", [("seed", 2, 0), ("korean", 3, 2)])
def test_fresh_deals_are_valid_orders_and_equal_on_every_backend(preset, players, jokers):
    from gostop_env.core.deck import validate_deck

    rules = Rules.preset(preset, players=players, jokers=jokers)
    dealt = {}
    for backend in available_backends():
        batch = GameBatch.from_seed(rules, 11, 64, backend=backend)
        rng = np.random.default_rng(0)
        for _ in range(30):  # play on, dealing the finished games afresh
            finished = batch.done_games()
            if finished.size:
                batch.reset_games(finished)
            batch.step(random_legal_actions(batch.legal_bits, rng))
        dealt[backend] = {name: getattr(batch, name).copy() for name in STATE_FIELDS}
    first = dealt[available_backends()[0]]
    for backend, state in dealt.items():
        for name in STATE_FIELDS:
            assert np.array_equal(state[name], first[name]), (backend, name)
    from gostop_env.core.deck import fresh_decks

    for deck in fresh_decks(rules, np.random.default_rng(3), 200):
        validate_deck(rules, deck)  # an order of the cards, never a void deal


def test_a_batch_without_a_generator_needs_decks_and_one_can_be_given():
    rules = Rules.preset("seed", players=2)
    deck = shuffled_decks(rules, np.random.default_rng(2), 1)[0]
    batch = GameBatch.from_decks(rules, [deck])
    with pytest.raises(ValueError, match="no generator"):
        batch.reset_games([0])
    batch.rng = np.random.default_rng(4)
    batch.reset_games([0])
    assert batch.stock[0].tolist() != deck[28:].tolist()


def test_fisher_yates_puts_each_card_everywhere_alike():
    from gostop_env.core.deck import fisher_yates

    decks = fisher_yates(np.random.default_rng(0).random((24_000, 48)))
    assert (np.sort(decks, axis=1) == np.arange(48)).all()
    counts = np.stack([np.bincount(decks[:, p], minlength=48) for p in (0, 20, 47)])
    assert counts.min() > 380 and counts.max() < 620  # 500 expected for each card at each place
