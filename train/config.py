"""Training configuration: one TOML file, read into typed sections, checked up front.

Top-level keys: ``kind`` (``"ppo"``: a card-play and go/stop policy; ``"go_stop"``: a
go/stop-only policy on top of ``ppo.card_player``), ``trainer`` (``"sb3"`` or ``"batched"``),
``out`` (run folder), ``seed``, ``players``, ``preset``, ``encoding``, ``checkpoint_every``
(timesteps), and the tables ``[bc]`` (optional behaviour cloning before PPO), ``[ppo]``,
``[opponents]``, ``[eval]``, ``[core]`` (the core's ``backend``) and ``[match]`` (``hands``
and ``bankroll``: train on matches, an episode a match, with ``ppo.reward`` one of
:data:`gostop_env.match_episodes.REWARDS`).
Every key and its default is a field below; unknown keys, values of the wrong type (``1.5``
for an integer, a string for a number) and values out of range (see ``LIMITS``) are errors
naming the key, raised when the config is read, before any work; so are agent names
(``bc.teacher``, ``ppo.card_player``, ``opponents.pool``, ``eval.against``) that do not
name an agent. ``--set section.key=value`` on the command line overrides a key (the value
is read as TOML).
Shipped configurations live in ``train/configs/`` and can be named without their path.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from gostop_env.core import Rules
from gostop_env.core.match import MatchFormat
from gostop_env.encodings import ENCODINGS, split_encoding
from gostop_env.match_episodes import match_format

SHIPPED_CONFIGS = Path(__file__).parent / "configs"
MAX_ROLLOUT = 4_000_000  # ppo.envs x ppo.n_steps: MaskablePPO's buffer holds that many observations
KINDS = ("ppo", "go_stop")
TRAINERS = ("sb3", "batched")  # MaskablePPO on the vector env, or the batched trainer (train.batched)
PRECISIONS = ("float32", "bfloat16")  # how the batched trainer's layers multiply
LR_SCHEDULES = ("constant", "linear")
CRITICS = ("own", "oracle")  # what the value network reads (see train.asymmetric)
STARTS_FROM = {  # the decisions a ppo.init model may make, by what the run's network decides
    "all": ("all",),
    "go_stop": ("go_stop", "all"),  # a network that decides everything has the same go/stop outputs
}


@dataclass(frozen=True)
class BCConfig:
    """Behaviour cloning: demonstrations of ``teacher`` in every seat, then supervised epochs.
    With ``behaviour``, that agent plays the hands and the teacher labels the states it
    reaches (DAgger; with ``ppo.init`` the student's own states). With ``temperature`` (and a
    search teacher and a behaviour) the policy is fitted to the softmax of the search's action
    values at that temperature, in chips, instead of its move. With ``parts`` above 1 the
    hands are split into that many parts, part i dealt and played from ``seed + i``, each in
    its own process: the demonstrations depend on ``parts``, not on how many cores run them."""

    teacher: str = "greedy:stop=ev:n=8"
    behaviour: str | None = None
    temperature: float | None = None  # chips: fit the softmax of a search teacher's action values
    hands: int = 4000
    parts: int = 1  # demonstrations in this many parts (part i from seed + i), in parallel processes
    epochs: int = 5
    batch_size: int = 512
    learning_rate: float = 1e-3
    go_stop_weight: float = 5.0  # loss weight of go/stop decisions (rare, and worth the most)
    value_weight: float = 0.5  # weight of the value loss (returns of the demonstrations)


@dataclass(frozen=True)
class PPOConfig:
    """PPO's settings, for MaskablePPO on :class:`gostop_env.vec_env.GoStopVecEnv` and for the
    batched trainer."""

    timesteps: int = 200_000
    envs: int = 256
    n_steps: int = 64
    batch_size: int = 2048
    epochs: int = 4
    learning_rate: float = 3e-4
    lr_schedule: str = "constant"  # or "linear": from learning_rate down to 0 at ppo.timesteps
    gamma: float = 1.0
    gae_lambda: float = 0.95
    ent_coef: float = 0.01
    clip_range: float = 0.2
    net_arch: tuple[int, ...] = (256, 256)
    reward: str = "chips"  # or "win": +1 / -1 / 0; with [match] also "match_win" or "match_chips"
    reward_scale: float = 0.1
    card_player: str = "greedy"  # plays the learner's cards when kind = "go_stop"
    critic: str = "own"  # what the value network reads: "own" (the policy's view) or "oracle" (every card)
    init: str | None = None  # start from this model (a name or folder) instead of [bc] or random weights
    value_warmup: int = 0  # the first timesteps train the value network only (the policy is held)
    precision: str = "float32"  # or "bfloat16": the batched trainer's layers multiply in bfloat16


@dataclass(frozen=True)
class OpponentsConfig:
    """The league: named agents with sampling weights, plus frozen snapshots of the learner."""

    pool: dict[str, float] = field(default_factory=lambda: {"greedy": 1.0})
    snapshot_every: int = 0  # timesteps between snapshots added to the pool; 0: none
    snapshot_weight: float = 1.0  # sampling weight of each snapshot
    max_snapshots: int = 5  # the oldest snapshot leaves the pool beyond this
    self_play: float = 0.0  # sampling weight of the live learner itself in other seats (batched trainer only)


@dataclass(frozen=True)
class EvalConfig:
    """Duplicate-deal tournaments of the learner against each agent in ``against``."""

    every: int = 50_000  # timesteps; 0: only at the end
    deals: int = 1000
    against: tuple[str, ...] = ("greedy",)


@dataclass(frozen=True)
class CoreConfig:
    """The rules core's engine for every game the run plays (training, cloning, evaluations)."""

    backend: str | None = None  # "numpy", "numba" or "numba-parallel"; None: $GOSTOP_BACKEND, else the fastest


@dataclass(frozen=True)
class MatchConfig:
    """Train on matches (:mod:`gostop_env.match_episodes`): ``hands`` a match (None: single
    hands), ended sooner by a lost ``bankroll`` if one is given."""

    hands: int | None = None
    bankroll: int | None = None


SECTIONS = {
    "bc": BCConfig,
    "ppo": PPOConfig,
    "opponents": OpponentsConfig,
    "eval": EvalConfig,
    "core": CoreConfig,
    "match": MatchConfig,
}


@dataclass(frozen=True)
class TrainConfig:
    """A whole training run (see the module docstring)."""

    kind: str = "ppo"
    trainer: str = "sb3"
    out: str = "runs/ppo"
    seed: int = 0
    players: int = 2
    preset: str = "seed"
    encoding: str = "vector"
    checkpoint_every: int = 50_000
    bc: BCConfig | None = None
    ppo: PPOConfig = field(default_factory=PPOConfig)
    opponents: OpponentsConfig = field(default_factory=OpponentsConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    core: CoreConfig = field(default_factory=CoreConfig)
    match: MatchConfig = field(default_factory=MatchConfig)

    def __post_init__(self) -> None:
        for where, section in (("", self), *((f"{n}.", getattr(self, n)) for n in SECTIONS)):
            if section is not None:
                _check_fields(where, section)
        from gostop_env.core import batch_class

        batch_class(self.core.backend)  # ValueError for an unknown engine, or numba's missing
        if self.encoding not in ENCODINGS:
            raise ValueError(f"encoding must be one of {sorted(ENCODINGS)}, got {self.encoding!r}")
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        self._check_trainer()
        self._check_match()
        if self.kind == "go_stop" and split_encoding(self.encoding)[0] != "vector":
            raise ValueError("go_stop training reads the vector encoding (or vector+match)")
        if self.ppo.timesteps == 0 and self.bc is None:
            raise ValueError("ppo.timesteps = 0 trains by behaviour cloning alone: it needs a [bc] table")
        self._check_critic_and_start()
        positive = {
            "ppo.envs": self.ppo.envs,
            "ppo.n_steps": self.ppo.n_steps,
            "ppo.batch_size": self.ppo.batch_size,
            "eval.deals": self.eval.deals,
        }
        if self.bc is not None:
            positive.update({"bc.hands": self.bc.hands, "bc.epochs": self.bc.epochs})
            if self.bc.parts > self.bc.hands:
                raise ValueError(f"bc.parts ({self.bc.parts}) must not exceed bc.hands ({self.bc.hands})")
            self._check_temperature(self.bc)
        for key, value in positive.items():
            if value < 1:
                raise ValueError(f"{key} must be at least 1, got {value}")
        if self.ppo.envs * self.ppo.n_steps > MAX_ROLLOUT:
            raise ValueError(
                f"ppo.envs x ppo.n_steps is {self.ppo.envs * self.ppo.n_steps:,}, over {MAX_ROLLOUT:,} steps a rollout"
            )
        if self.players == 3 and len(self.eval.against) < 2:
            raise ValueError("3-player evaluations need at least two agents in eval.against")
        if self.opponents.max_snapshots < 1:
            raise ValueError(f"opponents.max_snapshots must be at least 1, got {self.opponents.max_snapshots}")
        if not self.opponents.pool or sum(self.opponents.pool.values()) <= 0:
            raise ValueError("opponents.pool needs at least one agent, with weights >= 0 and a positive sum")
        self._check_agents()

    def _check_trainer(self) -> None:
        """The batched trainer trains card-play policies with the policy's own critic."""
        if self.trainer not in TRAINERS:
            raise ValueError(f"trainer must be one of {TRAINERS}, got {self.trainer!r}")
        if self.ppo.lr_schedule not in LR_SCHEDULES:
            raise ValueError(f"ppo.lr_schedule must be one of {LR_SCHEDULES}, got {self.ppo.lr_schedule!r}")
        if self.ppo.precision not in PRECISIONS:
            raise ValueError(f"ppo.precision must be one of {PRECISIONS}, got {self.ppo.precision!r}")
        if self.trainer == "sb3" and self.ppo.precision != "float32":
            raise ValueError("ppo.precision = 'bfloat16' needs trainer = 'batched'")
        if self.trainer == "sb3" and self.opponents.self_play > 0:
            raise ValueError("opponents.self_play needs trainer = 'batched' (MaskablePPO's env seats one learner)")
        if self.trainer == "batched":
            if self.kind != "ppo":
                raise ValueError("trainer = 'batched' trains kind = 'ppo' (card play and go/stop), not 'go_stop'")
            if self.ppo.critic != "own":
                raise ValueError("trainer = 'batched' has no oracle critic yet: use ppo.critic = 'own'")
            if self.ppo.value_warmup:
                raise ValueError("trainer = 'batched' has no value warm-up yet: leave out ppo.value_warmup")

    def _check_match(self) -> None:
        """Matches: a valid format, a network that reads them, a trainer that plays them, a reward."""
        from gostop_env.match_episodes import check_reward

        try:
            fmt = match_format(self.rules, self.match.hands, self.match.bankroll)
            check_reward(self.ppo.reward, fmt)
        except (TypeError, ValueError) as error:
            raise ValueError(f"[match] / ppo.reward: {error}") from None
        if fmt is None:
            return
        if not split_encoding(self.encoding)[1]:
            raise ValueError(
                f"[match] trains on matches: the network must read the match sections "
                f"(encoding = '{split_encoding(self.encoding)[0]}+match', not {self.encoding!r})"
            )
        if self.trainer != "sb3":
            raise ValueError("[match]: trainer = 'batched' plays single hands; train on matches with trainer = 'sb3'")
        if self.ppo.critic != "own":
            raise ValueError("[match]: the oracle critic reads single hands; use ppo.critic = 'own'")

    @property
    def match_format(self) -> MatchFormat | None:
        """The matches this run trains on (None: single hands)."""
        return match_format(self.rules, self.match.hands, self.match.bankroll)

    @staticmethod
    def _check_temperature(bc: BCConfig) -> None:
        """bc.temperature: positive, and only where a search labels a behaviour's states."""
        if bc.temperature is None:
            return
        if not bc.temperature > 0:
            raise ValueError(f"bc.temperature must be a positive number of chips, got {bc.temperature!r}")
        if bc.behaviour is None or not bc.teacher.split(":")[0] == "search":
            raise ValueError("bc.temperature fits a search teacher's action values on bc.behaviour's states: set both")

    def _check_critic_and_start(self) -> None:
        if self.ppo.critic not in CRITICS:
            raise ValueError(f"ppo.critic must be one of {CRITICS}, got {self.ppo.critic!r}")
        if self.ppo.critic == "oracle" and self.encoding != "vector":
            raise ValueError("ppo.critic = 'oracle' trains a policy reading the vector encoding (encoding = 'vector')")
        if self.ppo.value_warmup > self.ppo.timesteps:
            raise ValueError(
                f"ppo.value_warmup ({self.ppo.value_warmup}) is more than ppo.timesteps ({self.ppo.timesteps})"
            )

    @property
    def network_encoding(self) -> str:
        """What the trained network reads: ``encoding``, or with the oracle critic ``oracle``
        (whose first part is the ``vector`` encoding the policy reads)."""
        return "oracle" if self.ppo.critic == "oracle" else self.encoding

    def _check_agents(self) -> None:
        """Every agent name in the config names an agent under these rules (ValueError naming the key)."""
        from gostop.agents.registry import make_agent

        rules = self.rules  # raises on a bad preset or player count
        names = [("opponents.pool", name) for name in self.opponents.pool]
        names += [("eval.against", name) for name in self.eval.against]
        names += [("bc.teacher", self.bc.teacher)] if self.bc is not None else []
        names += [("bc.behaviour", self.bc.behaviour)] if self.bc is not None and self.bc.behaviour else []
        names += [("ppo.card_player", self.ppo.card_player)] if self.kind == "go_stop" else []
        for key, name in names:
            try:
                make_agent(name, rules)
            except ValueError as error:
                raise ValueError(f"{key}: {error}") from None
        if self.ppo.init is not None:
            self._check_init(self.ppo.init)

    def _check_init(self, name: str) -> None:
        """ValueError unless the model ``ppo.init`` names fits the network this run trains."""
        from gostop.agents.learned import model_folder, read_meta, resolve_name

        try:
            meta = read_meta(model_folder(resolve_name(name, self.rules)))
        except ValueError as error:
            raise ValueError(f"ppo.init: {error}") from None
        decides = "go_stop" if self.kind == "go_stop" else "all"
        if meta["decides"] not in STARTS_FROM[decides]:
            raise ValueError(f"ppo.init: model {name!r} has decides {meta['decides']!r}; this run trains {decides!r}")
        arch = list(self.ppo.net_arch)
        found = {  # the rules may differ: the weights are a starting point
            "players": (meta["players"], self.players),
            "encoding": (meta["encoding"], self.encoding),
            "policy layers": (meta["network"]["pi"], arch),
            "value layers": (meta["network"]["vf"], arch),
            "activation": (meta["network"]["activation"], "tanh"),
        }
        for what, (has, needs) in found.items():
            if has != needs:
                raise ValueError(f"ppo.init: model {name!r} has {what} {has!r}; this run trains {needs!r}")

    @property
    def rules(self) -> Rules:
        return Rules.preset(self.preset, players=self.players)

    def learning_rate_at(self, steps: int) -> float:
        """The learning rate after ``steps`` of ``ppo.timesteps`` under ``ppo.lr_schedule``."""
        p = self.ppo
        if p.lr_schedule == "constant":
            return p.learning_rate
        return p.learning_rate * max(0.0, 1.0 - steps / p.timesteps)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        data = dict(data)
        _reject_unknown("the config", data, {f.name for f in dataclasses.fields(cls)})
        for name, section in SECTIONS.items():
            if data.get(name) is not None:
                if not isinstance(data[name], dict):
                    raise ValueError(f"[{name}] must be a table of keys, got {data[name]!r}")
                table = dict(data[name])
                _reject_unknown(f"[{name}]", table, {f.name for f in dataclasses.fields(section)})
                for key in ("net_arch", "against"):
                    if isinstance(table.get(key), list):
                        table[key] = tuple(table[key])
                data[name] = section(**table)
        return cls(**data)

    @classmethod
    def load(cls, name_or_path: str, overrides: Sequence[str] = ()) -> TrainConfig:
        """Read a TOML file (or a shipped config by name), then apply ``section.key=value`` overrides."""
        path = Path(name_or_path)
        if not path.is_file() and (SHIPPED_CONFIGS / f"{name_or_path}.toml").is_file():
            path = SHIPPED_CONFIGS / f"{name_or_path}.toml"
        if not path.is_file():
            shipped = sorted(p.stem for p in SHIPPED_CONFIGS.glob("*.toml"))
            raise ValueError(f"no config file {name_or_path!r} (shipped configs: {shipped})")
        if not path.is_file() or path.stat().st_size > MAX_CONFIG_BYTES:
            raise ValueError(f"{path} is not a config file of at most {MAX_CONFIG_BYTES} bytes")
        data = _toml(path.read_text(), str(path))
        for override in overrides:
            _apply(data, override)
        return cls.from_dict(data)


LIMITS: dict[str, tuple[float | None, float | None]] = {
    "seed": (0, None),
    "match.hands": (1, 1000),
    "match.bankroll": (1, None),
    "checkpoint_every": (0, None),
    "bc.hands": (1, 10_000_000),
    "bc.parts": (1, 64),
    "bc.epochs": (1, None),
    "bc.batch_size": (1, None),
    "bc.learning_rate": (1e-12, 10),
    "bc.go_stop_weight": (0, None),
    "bc.value_weight": (0, None),
    "ppo.timesteps": (0, None),  # 0: behaviour cloning only (needs [bc])
    "ppo.envs": (1, 65_536),
    "ppo.n_steps": (1, 1_000_000),
    "ppo.batch_size": (2, None),
    "ppo.epochs": (1, None),
    "ppo.learning_rate": (1e-12, 10),
    "ppo.gamma": (0, 1),
    "ppo.gae_lambda": (0, 1),
    "ppo.ent_coef": (0, None),
    "ppo.clip_range": (1e-12, None),
    "ppo.reward_scale": (1e-12, None),
    "ppo.net_arch": (1, 4096),
    "ppo.value_warmup": (0, None),
    "opponents.pool": (0, None),
    "opponents.snapshot_every": (0, None),
    "opponents.snapshot_weight": (0, None),
    "opponents.max_snapshots": (1, None),
    "opponents.self_play": (0, None),
    "eval.every": (0, None),
    "eval.deals": (1, None),
}
"""Lowest and highest allowed value of each numeric key (for lists and tables: of each entry)."""


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


TYPES = {
    "int": (_is_int, "an integer"),
    "float": (_is_number, "a number"),
    "str": (lambda v: isinstance(v, str) and v.strip() != "", "a non-empty string"),
    "str | None": (lambda v: v is None or (isinstance(v, str) and v.strip() != ""), "a non-empty string"),
    "int | None": (lambda v: v is None or _is_int(v), "an integer"),
    "float | None": (lambda v: v is None or _is_number(v), "a number"),
    "tuple[int, ...]": (
        lambda v: isinstance(v, tuple) and 1 <= len(v) <= 8 and all(map(_is_int, v)),
        "a list of 1 to 8 integers",
    ),
    "tuple[str, ...]": (lambda v: isinstance(v, tuple) and all(isinstance(x, str) for x in v), "a list of agent names"),
    "dict[str, float]": (
        lambda v: isinstance(v, dict) and all(map(_is_number, v.values())),
        "a table of agent names and numbers",
    ),
}
"""What each field type of the sections above accepts (the field's annotation as written)."""


def _check_fields(where: str, section: Any) -> None:
    """Raise ValueError naming the first key of ``section`` of the wrong type or out of range."""
    for f in dataclasses.fields(section):
        if f.name in SECTIONS:
            continue
        key, value = where + f.name, getattr(section, f.name)
        valid, expected = TYPES[str(f.type)]
        if not valid(value):
            raise ValueError(f"{key} must be {expected}, got {value!r}")
        if value is None:
            continue
        low, high = LIMITS.get(key, (None, None))
        entries = value.values() if isinstance(value, dict) else value if isinstance(value, tuple) else [value]
        for entry in entries:
            if (low is not None and entry < low) or (high is not None and entry > high):
                span = f"at least {low}" if high is None else f"between {low} and {high}"
                raise ValueError(f"{key} must be {span}, got {value!r}")


def _reject_unknown(where: str, table: dict[str, Any], known: set[str]) -> None:
    unknown = sorted(set(table) - known)
    if unknown:
        raise ValueError(f"unknown key(s) {unknown} in {where}; known: {sorted(known)}")


def _apply(data: dict[str, Any], override: str) -> None:
    """Set ``section.key=value`` (or ``key=value``) in ``data``, the value read as TOML."""
    key, equals, text = override.partition("=")
    if not equals or not key:
        raise ValueError(f"override {override!r} must look like section.key=value")
    try:
        value = _toml(f"v = {text}", "the override")["v"]
    except ValueError:
        value = text  # a bare word: a string
    *sections, last = key.strip().split(".")
    if len(sections) > 1:
        raise ValueError(f"override {override!r}: keys are key=value or section.key=value, one level deep")
    table = data
    for section in sections:
        table = table.setdefault(section, {})
        if not isinstance(table, dict):
            raise ValueError(f"override {override!r}: {section!r} is a key, not a [{section}] table")
    table[last] = value


MAX_CONFIG_BYTES = 1 << 20


def _toml(text: str, where: str) -> dict[str, Any]:
    """TOML text read into a dict; ValueError for invalid or too deeply nested TOML."""
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as error:
        reason = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise ValueError(f"{where} is not valid TOML: {reason}") from None
