"""The rule set: every option of docs/rules.md §12 as one frozen value, with the presets.

Build one with :func:`Rules.preset` (``Rules.preset("korean", players=3)``), or with
``Rules(...)`` for the ``seed`` defaults plus overrides. A bad option raises
``ValueError`` naming the option and what is allowed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

PRESETS = ("seed", "korean", "matgo")
PRESET_PLAYERS = {"seed": (2, 3), "korean": (2, 3), "matgo": (2,)}
"""The player counts each preset is played by (``matgo`` is 2-player Matgo)."""
GO_MULTIPLIERS = ("once_over_3", "doubling_from_3")
JA_PPUK_MODES = ("previous_turn", "any_turn")
CHOICE_RULES = ("distinct", "always")
STEAL_CHOICES = ("lowest", "highest")
LAYOUT_FOUR_MODES = ("redeal", "dealer_wins", "nagari")

MAX_TARGET = 100
"""The largest go/stop target: no hand scores near it (brights, animals, ribbons and junk
give well under 100 points), and the encodings scale the target by 1/10 into their bounds."""

MAX_CARRY = 24
"""The largest nagari carry (consecutive nagari hands before a hand). A hand may start with
a carry of 0..MAX_CARRY (a larger one is a ValueError), and the carry after a nagari at
the bound stays at the bound: under ``nagari_compounding`` the multiplier stops at
2^24. Why 24: a share is (score + gos) < 2^7 times at most 2^24 from everything but the
carry (shakes and bombs ≤ 3, animals 1, gos − 2 ≤ 18, bright-bak and pi-bak 2), and a
winner is paid at most two shares, so every payment stays below 2^(7 + 24 + 24 + 1) =
2^56, well inside the int64 arrays of the batch core; both engines compute it exactly."""
CHONGTONG_CHIPS = 5
"""What each opponent pays a chongtong holder, flat (§3.3), unless ``chongtong_chips`` says
otherwise."""

MAX_BONUS_CHIPS = 100
"""The most chips a flat payment option (``chongtong_chips``, ``first_ppuk_chips``,
``three_ppuk_chips``, ``first_ttadak_chips``) may be set to."""

PPUK_STREAK = 3
"""Under ``consecutive_ppuk``, ppuks on a player's first, second and third turns pay
1, 2 and 3 times ``first_ppuk_chips``; the streak pays nothing beyond the third turn."""

THREE_PPUKS = 3
"""The ppuks in one hand that win it at once under ``three_ppuk_chips``."""


@dataclass(frozen=True)
class Rules:
    """Every rule option. Defaults are the ``seed`` preset with 2 players.

    Attributes:
        players: 2 or 3 seats; seat 0 deals and moves first.
        target: points needed to go or stop, 1..MAX_TARGET; ``None`` means 7 with 2
            players, 3 with 3.
        jokers: jokers in the deck (0, 1 or 2); card 48 is used first, then 49.
        go_multiplier: ``"once_over_3"`` (×2 once when gos > 3) or
            ``"doubling_from_3"`` (×2^(gos−2) from the third go).
        go_bak: a loser who said go pays for the other losers (korean).
        bomb_bonus: a bomb also counts as a shake and takes 1 junk from each opponent.
        ja_ppuk: ``"previous_turn"`` (the capturer's own immediately preceding turn)
            or ``"any_turn"`` (any earlier turn of the capturer).
        pi_bak_threshold: a loser with junk value at most this pays double (pi-bak).
        pi_bak_zero_exempt: a loser with no junk at all is exempt from pi-bak.
        nagari_compounding: ×2 per consecutive nagari instead of ×2 once.
        september_dual: card 32 counts as double junk whenever that scores higher.
        sweep_on_last_turn: a sweep on the hand's last turn still steals.
        last_card_exceptions: on the flip of the last stock card a would-be ppuk takes
            all three cards and a would-be jjok steals nothing.
        choice_rule: ``"distinct"`` offers a choice between two layout cards only when
            they differ in kind or junk value (else the lower id is taken);
            ``"always"`` always offers it.
        steal_choice: which junk card a giver hands over (§6 [gap]): ``"lowest"`` value,
            lowest id among equals, or ``"highest"`` value, highest id among equals.
        bonus_steal: a joker (bonus card) played from hand or flipped from the stock also
            takes one junk from each opponent at the end of the turn (needs jokers).
        first_ppuk_chips: chips each opponent pays at once for a ppuk on a player's first
            turn (0: none).
        consecutive_ppuk: ppuks on a player's second and third turns, after a ppuk on every
            turn before, pay 2 and 3 times ``first_ppuk_chips`` (needs it).
        three_ppuk_chips: a player's third ppuk of the hand wins it at once: each opponent
            pays this many chips, flat (0: no such win).
        first_ttadak_chips: chips each opponent pays at once for a ttadak on a player's
            first turn (0: none).
        chongtong_chips: what each opponent pays a chongtong, flat (§3.3).
        layout_four: four cards of one month on the layout at the deal: ``"redeal"`` (a
            void deal, dealt again), ``"dealer_wins"`` (the dealer is paid as for a
            chongtong) or ``"nagari"`` (the hand is a nagari).
    """

    players: int = 2
    target: int | None = None
    jokers: int = 0
    go_multiplier: str = "once_over_3"
    go_bak: bool = False
    bomb_bonus: bool = False
    ja_ppuk: str = "previous_turn"
    pi_bak_threshold: int = 5
    pi_bak_zero_exempt: bool = False
    nagari_compounding: bool = False
    september_dual: bool = False
    sweep_on_last_turn: bool = True
    last_card_exceptions: bool = False
    choice_rule: str = "distinct"
    steal_choice: str = "lowest"
    bonus_steal: bool = False
    first_ppuk_chips: int = 0
    consecutive_ppuk: bool = False
    three_ppuk_chips: int = 0
    first_ttadak_chips: int = 0
    chongtong_chips: int = CHONGTONG_CHIPS
    layout_four: str = "redeal"

    def __post_init__(self) -> None:
        for name in _INT_OPTIONS:  # NumPy integers are stored as Python ints (JSON, hashing)
            value = getattr(self, name)
            if isinstance(value, np.integer) and not isinstance(value, np.bool_):
                object.__setattr__(self, name, int(value))
        _check_choice("players", self.players, (2, 3))
        _check_choice("jokers", self.jokers, (0, 1, 2))
        _check_choice("go_multiplier", self.go_multiplier, GO_MULTIPLIERS)
        _check_choice("ja_ppuk", self.ja_ppuk, JA_PPUK_MODES)
        _check_choice("choice_rule", self.choice_rule, CHOICE_RULES)
        _check_choice("steal_choice", self.steal_choice, STEAL_CHOICES)
        _check_choice("layout_four", self.layout_four, LAYOUT_FOUR_MODES)
        if self.target is not None and not (_is_int(self.target) and 1 <= self.target <= MAX_TARGET):
            raise ValueError(
                f"option 'target' must be a positive integer up to {MAX_TARGET} or None, got {self.target!r}"
            )
        if not (_is_int(self.pi_bak_threshold) and 0 <= self.pi_bak_threshold < 26):
            raise ValueError(f"option 'pi_bak_threshold' must be an integer 0..25, got {self.pi_bak_threshold!r}")
        for name in _CHIPS_OPTIONS:
            low = 1 if name == "chongtong_chips" else 0
            if not (_is_int(getattr(self, name)) and low <= getattr(self, name) <= MAX_BONUS_CHIPS):
                raise ValueError(
                    f"option {name!r} must be an integer {low}..{MAX_BONUS_CHIPS}, got {getattr(self, name)!r}"
                )
        for name in _BOOL_OPTIONS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"option {name!r} must be True or False, got {getattr(self, name)!r}")
        self._check_conflicts()

    def _check_conflicts(self) -> None:
        """ValueError naming both options where one needs what another rules out."""
        if self.bonus_steal and self.jokers == 0:
            raise ValueError("option 'bonus_steal' needs bonus cards, but 'jokers' is 0: the deck has none")
        if self.consecutive_ppuk and self.first_ppuk_chips == 0:
            raise ValueError(
                "option 'consecutive_ppuk' multiplies 'first_ppuk_chips', which is 0: set it, or leave both off"
            )

    @property
    def target_score(self) -> int:
        """The go/stop target in force: ``target``, or 7 with 2 players and 3 with 3."""
        if self.target is not None:
            return self.target
        return 7 if self.players == 2 else 3

    @property
    def hand_size(self) -> int:
        """Cards dealt to each hand (§2)."""
        return 10 if self.players == 2 else 7

    @property
    def deck_size(self) -> int:
        """Cards in play: 48 plus the jokers."""
        return 48 + self.jokers

    @classmethod
    def preset(cls, name: str = "seed", players: int = 2, **overrides: Any) -> Rules:
        """The named preset (``"seed"``, ``"korean"`` or ``"matgo"``, 2 players only) for
        ``players`` seats, with overrides."""
        _check_choice("preset", name, PRESETS)
        _check_choice("players", players, (2, 3))
        if players not in PRESET_PLAYERS[name]:
            raise ValueError(f"preset {name!r} is 2-player Matgo: it cannot be played by players={players}")
        values: dict[str, Any] = dict(players=players)
        if name in ("korean", "matgo"):
            values.update(_KOREAN, pi_bak_threshold=7 if players == 2 else 5)
        if name == "matgo":
            values.update(_MATGO)
        unknown = sorted(set(overrides) - _FIELD_NAMES)
        if unknown:
            raise ValueError(f"unknown rule option(s) {unknown}; options are {sorted(_FIELD_NAMES)}")
        values.update(overrides)
        return cls(**values)

    @property
    def paid_ppuk_streak(self) -> int:
        """The last own turn whose ppuk is paid at once when every turn before had one:
        ``PPUK_STREAK`` under ``consecutive_ppuk``, else 1 (the first turn's only)."""
        return PPUK_STREAK if self.consecutive_ppuk else 1

    @property
    def preset_name(self) -> str | None:
        """The preset these rules are, exactly (no override), or None."""
        return next((name for name in presets_for(self.players) if Rules.preset(name, self.players) == self), None)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict of every option (for saved games and logs)."""
        return dataclasses.asdict(self)


_KOREAN = dict(
    go_multiplier="doubling_from_3",
    go_bak=True,
    bomb_bonus=True,
    ja_ppuk="any_turn",
    pi_bak_zero_exempt=True,
    nagari_compounding=True,
    september_dual=True,
    sweep_on_last_turn=False,
    last_card_exceptions=True,
)
_MATGO = dict(
    jokers=2,
    bonus_steal=True,
    first_ppuk_chips=7,
    consecutive_ppuk=True,
    three_ppuk_chips=7,
    first_ttadak_chips=7,
    chongtong_chips=10,
    layout_four="dealer_wins",
)
"""What ``matgo`` changes from ``korean`` with 2 players (docs/rules.md §15 gives each
reading's source)."""
_FIELD_NAMES = {f.name for f in dataclasses.fields(Rules)}
_BOOL_OPTIONS = tuple(f.name for f in dataclasses.fields(Rules) if f.type in ("bool", bool))
_CHIPS_OPTIONS = ("first_ppuk_chips", "three_ppuk_chips", "first_ttadak_chips", "chongtong_chips")
_INT_OPTIONS = ("players", "target", "jokers", "pi_bak_threshold", *_CHIPS_OPTIONS)


def presets_for(players: int) -> tuple[str, ...]:
    """The presets that ``players`` seats can play."""
    return tuple(name for name in PRESETS if players in PRESET_PLAYERS[name])


def check_carry(carry: Any, scalar: bool = False) -> np.ndarray:
    """``carry`` (an integer, or unless ``scalar`` an array of them) as int64, checked to lie
    in 0..MAX_CARRY (TypeError for a non-integer, ValueError out of range)."""
    if _is_int(carry):  # the common case, checked without NumPy
        if not 0 <= carry <= MAX_CARRY:
            raise _carry_out_of_range(carry)
        return np.array(carry, np.int64)
    array = np.asarray(carry)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer) or (scalar and array.ndim):
        raise TypeError(f"carry must be an integer 0..{MAX_CARRY}, got {carry!r}")
    if array.size and (array.min() < 0 or array.max() > MAX_CARRY):
        raise _carry_out_of_range(array.min() if array.min() < 0 else array.max())
    return array.astype(np.int64)


def _carry_out_of_range(value: Any) -> ValueError:
    return ValueError(f"carry must be 0..{MAX_CARRY} (consecutive nagari hands; see MAX_CARRY), got {value}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_choice(name: str, value: Any, allowed: tuple[Any, ...]) -> None:
    """``value`` must be one of ``allowed``, of the same type (2.0 is not the player count 2)."""
    if not any(type(value) is type(choice) and value == choice for choice in allowed):
        raise ValueError(f"option {name!r} must be one of {list(allowed)}, got {value!r}")
