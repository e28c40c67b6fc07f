"""Agents backed by trained networks, and the model folders they are saved in.

A *model folder* holds two files, neither of which can run code when loaded:

- ``policy.safetensors``: the weights of an sb3-contrib ``MaskableActorCriticPolicy`` (a
  tensor-only format), with the model's encoding, players and ``decides`` repeated in its
  header;
- ``model.json``: what it was trained for: ``format``, ``encoding``, ``players``,
  ``preset``; ``decides``: ``"all"`` or ``"go_stop"``; for go/stop models the name of the
  ``card_player`` it sits on; ``network``: the architecture (inputs, actions, the policy
  and value layer widths, the activation); and free-form training metadata (``trained``).

:func:`load_network` reads a folder, or the name of a model shipped in ``agents/models/``;
:func:`gostop.agents.registry.load_model` (``make_agent("model:NAME_OR_PATH")`` from the
command line) turns it into a complete agent, a go/stop model's card player included.
Everything is checked before the weights are used: ``model.json``'s keys and types, the
architecture against the weights' shapes, the header against ``model.json``, and a
go/stop model's chain of card players (no cycles). A model plays only the rules it was
trained for: its player count and its preset, every option as the preset has it (any other
rules are a :class:`ModelError` naming the options that differ).

Models of the first format (``policy.pth``, a pickle, which can run any code when loaded)
are refused; :func:`convert_pickled_model` (``gostop convert-model DIR``) converts a folder
*you trust*. :func:`model_fingerprint` identifies a model's exact files (tournaments key
their saved results with it).

Requires torch, sb3-contrib and safetensors (``pip install "gostop[rl]"``) to load;
fingerprints and metadata checks need none of them.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from gostop_env.core import NUM_ACTIONS, GameBatch, Phase, Rules
from gostop_env.core.rules import PRESETS
from gostop_env.encodings import ENCODINGS, encode, encoding_shape, encoding_size, section_slices
from gostop_env.files import read_json_object
from gostop_env.policy import MASKS, Policy

MODEL_FORMAT = "gostop-model/2"
PICKLED_FORMAT = "gostop-model/1"  # policy.pth: refused, converted by convert_pickled_model
WEIGHTS_FILE, META_FILE, PICKLED_FILE = "policy.safetensors", "model.json", "policy.pth"
SHIPPED_MODELS = Path(__file__).parent / "models"
ACTIVATIONS = ("tanh", "relu")
DECIDES = ("all", "go_stop")
HEADER_KEYS = ("encoding", "players", "decides")  # repeated in the weights' header
NETWORK_KEYS = {"inputs", "actions", "pi", "vf", "activation"}
MAX_META_BYTES = 1 << 20  # model.json is small; a larger file is refused unread


class NetworkPolicy:
    """A masked actor-critic network as a batched policy: the most likely legal action, or
    (``deterministic=False``) one sampled from the masked distribution with the ``rng`` given."""

    def __init__(self, network: Any, encoding: str = "vector", deterministic: bool = True, name: str = "model"):
        self.network, self.encoding, self.deterministic, self.name = network, encoding, deterministic, name

    def __call__(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        logits = np.where(np.asarray(masks, bool), self.logits(observations), -np.inf)
        if not self.deterministic:
            logits = logits + rng.gumbel(size=logits.shape)
        return logits.argmax(axis=1).astype(np.int64)

    def logits(self, observations: np.ndarray) -> np.ndarray:
        """Unmasked action logits, ``(n, 125)``."""
        import torch

        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observations, np.float32), device=self.network.device)
            features = self.network.extract_features(obs, self.network.pi_features_extractor)
            latent = self.network.mlp_extractor.forward_actor(features)
            return self.network.action_net(latent).cpu().numpy()

    def values(self, observations: np.ndarray) -> np.ndarray:
        """The critic's value of each observation, ``(n,)``, in the training's reward units."""
        import torch

        with torch.no_grad():
            obs = torch.as_tensor(np.asarray(observations, np.float32), device=self.network.device)
            return self.network.predict_values(obs).cpu().numpy()[:, 0].astype(np.float64)


class ValueEstimate:
    """A trained network's critic read as chips: what the viewing seat of each game expects
    to be paid by the end of the hand, from its own view (search's leaf values)."""

    def __init__(self, network: NetworkPolicy, chips_per_unit: float, name: str = "model"):
        self.network, self.chips_per_unit, self.name = network, chips_per_unit, name

    def __call__(self, batch: GameBatch, viewers: np.ndarray) -> np.ndarray:
        return self.network.values(encode(batch, viewers, self.network.encoding)) * self.chips_per_unit


def value_estimate(name_or_path: str, rules: Rules | None = None) -> ValueEstimate:
    """The critic of a model that makes every decision and was trained on chips
    (``ppo.reward = "chips"``), as chips (:class:`ValueEstimate`); ModelError for any other."""
    network, meta, _ = load_network(name_or_path, rules)
    ppo = meta.get("trained", {}).get("config", {}).get("ppo", {})
    if meta["decides"] != "all" or ppo.get("reward") != "chips" or not ppo.get("reward_scale", 0) > 0:
        raise ModelError(
            f"model {name_or_path!r} has no critic that values chips: a leaf value needs a model that makes "
            f"every decision trained with ppo.reward = 'chips' (it decides {meta['decides']!r}, "
            f"reward {ppo.get('reward')!r})"
        )
    return ValueEstimate(network, 1.0 / float(ppo["reward_scale"]), name=f"model:{name_or_path}")


class GoStopComposite:
    """A card player for every decision but go/stop, which ``go_stop`` makes. Both read the
    ``vector`` encoding, or the go/stop policy ``vector+match`` (the composite then reads that,
    and gives the card player its ``vector`` part, where the two begin alike)."""

    def __init__(self, card_player: Policy, go_stop: Policy, name: str = "model"):
        for policy, allowed in ((card_player, ("vector", MASKS)), (go_stop, ("vector", "vector+match", MASKS))):
            if policy.encoding not in allowed:
                raise ValueError(f"go/stop composites read the vector encoding, not {policy.encoding!r}")
        self.card_player, self.go_stop, self.name = card_player, go_stop, name
        self.encoding = "vector+match" if go_stop.encoding == "vector+match" else "vector"

    def __call__(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        at_go_stop = observations[:, _PHASE].argmax(axis=1) == Phase.GO_STOP
        actions = np.full(len(masks), -1, np.int64)
        for rows, policy in ((at_go_stop, self.go_stop), (~at_go_stop, self.card_player)):
            if rows.any():
                seen = observations[rows] if policy.encoding == self.encoding else observations[rows][:, :_VECTOR]
                actions[rows] = policy(seen, masks[rows], rng)
        return actions


_PHASE = section_slices("vector")["phase"]
_VECTOR = encoding_size("vector")


class ModelError(ValueError):
    """A model folder that cannot be loaded: missing, of an old or unknown format, or inconsistent."""


BEST = "best"
BEST_MODELS = {
    (2, "seed"): "expert256_ppo",
    (2, "korean"): "korean2_ppo",
    (2, "matgo"): "matgo2_ppo",
    (3, "seed"): "seed3_ppo",
    (3, "korean"): "expert3_ppo",
}
"""The strongest shipped network for each (players, preset) that has one: what ``model:best`` names."""


def best_model(rules: Rules | None) -> str:
    """The shipped model ``model:best`` resolves to under ``rules``; ModelError where none is shipped."""
    if rules is None:
        raise ModelError("model:best names the strongest shipped network for the rules in use: give the rules")
    key = (rules.players, rules.preset_name)
    if key not in BEST_MODELS:
        shipped = ", ".join(f"{p} players {preset}" for p, preset in sorted(BEST_MODELS))
        raise ModelError(
            f"no shipped network for {rules.players} players under these rules "
            f"(model:best exists for the presets: {shipped})"
        )
    return BEST_MODELS[key]


def resolve_name(name_or_path: str, rules: Rules | None) -> str:
    """``name_or_path``, or for ``"best"`` (where no folder of that name is in the working
    folder) the shipped model it names under ``rules``."""
    if name_or_path == BEST and not (Path(BEST) / META_FILE).is_file():
        return best_model(rules)
    return name_or_path


def model_folder(name_or_path: str) -> Path:
    """The folder of a shipped model name or of a path; :class:`ModelError` when it holds no model."""
    folder = Path(name_or_path)
    if not (folder / META_FILE).is_file() and (SHIPPED_MODELS / name_or_path / META_FILE).is_file():
        folder = SHIPPED_MODELS / name_or_path
    if (folder / PICKLED_FILE).is_file() and not (folder / WEIGHTS_FILE).is_file():
        raise ModelError(
            f"{folder} holds a model in the old pickle format ({PICKLED_FILE}), which can run any "
            f"code when loaded, so it is refused. If you trust where it came from, convert it once "
            f"with: gostop convert-model {folder}"
        )
    if not (folder / META_FILE).is_file() or not (folder / WEIGHTS_FILE).is_file():
        shipped = sorted(p.name for p in SHIPPED_MODELS.glob("*") if (p / META_FILE).is_file())
        raise ModelError(
            f"no model at {name_or_path!r} (a folder with {META_FILE} and {WEIGHTS_FILE}, "
            f"or a shipped model: {shipped})"
        )
    return folder


def read_meta(folder: str | Path) -> dict[str, Any]:
    """``model.json`` of ``folder``, checked (:class:`ModelError` naming the fault)."""
    meta = _read_json(Path(folder) / META_FILE)
    if meta.get("format") == PICKLED_FORMAT:
        raise ModelError(
            f"{folder}: model format {PICKLED_FORMAT} (pickled weights) is refused; if you trust "
            f"the folder, convert it with: gostop convert-model {folder}"
        )
    if meta.get("format") != MODEL_FORMAT:
        raise ModelError(f"{folder}: unknown model format {meta.get('format')!r} (expected {MODEL_FORMAT})")
    check_meta(meta, str(folder))
    return meta


def check_meta(meta: dict[str, Any], where: str = "model.json") -> None:
    """Raise :class:`ModelError` unless ``meta`` has every key a model needs, of the right type."""
    _require(meta, "encoding", where, lambda v: v in ENCODINGS, f"one of {sorted(ENCODINGS)}")
    _require(meta, "players", where, lambda v: type(v) is int and v in (2, 3), "2 or 3")
    _require(meta, "preset", where, lambda v: v in PRESETS, f"one of {list(PRESETS)}")
    _require(meta, "decides", where, lambda v: v in DECIDES, f"one of {list(DECIDES)}")
    if meta["decides"] == "go_stop":
        _require(meta, "card_player", where, lambda v: isinstance(v, str) and v.strip() != "", "an agent name")
    _require(meta, "network", where, lambda v: isinstance(v, dict), "a table describing the network")
    network, where = meta["network"], f"{where}: network"
    unknown = sorted(set(network) - NETWORK_KEYS)
    if unknown:
        raise ModelError(f"{where}: unknown key(s) {unknown}; known: {sorted(NETWORK_KEYS)}")
    widths = "a list of 1 to 8 layer widths 1..4096"
    _require(network, "inputs", where, lambda v: type(v) is int and v > 0, "a positive integer")
    _require(network, "actions", where, lambda v: type(v) is int and v == NUM_ACTIONS, str(NUM_ACTIONS))
    _require(network, "pi", where, _layer_widths, widths)
    _require(network, "vf", where, _layer_widths, widths)
    _require(network, "activation", where, lambda v: v in ACTIVATIONS, f"one of {list(ACTIVATIONS)}")
    size = int(np.prod(encoding_shape(meta["encoding"])))
    if network["inputs"] != size:
        raise ModelError(f"{where}: {network['inputs']} inputs, but the {meta['encoding']!r} encoding has {size}")


def _require(table: dict[str, Any], key: str, where: str, valid: Any, expected: str) -> None:
    if key not in table:
        raise ModelError(f"{where}: missing key {key!r} ({expected})")
    try:
        ok = bool(valid(table[key]))
    except TypeError:  # e.g. an unhashable value tested for membership
        ok = False
    if not ok:
        raise ModelError(f"{where}: {key!r} must be {expected}, got {table[key]!r}")


def _layer_widths(value: Any) -> bool:
    return isinstance(value, list) and 1 <= len(value) <= 8 and all(type(w) is int and 1 <= w <= 4096 for w in value)


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return read_json_object(path, MAX_META_BYTES, "a model's metadata")
    except ValueError as error:
        raise ModelError(str(error)) from None


def _check_rules(name_or_path: str, meta: dict[str, Any], rules: Rules) -> None:
    """ModelError unless ``rules`` are those the model was trained under."""
    if rules.players != meta["players"]:
        raise ModelError(f"model {name_or_path!r} was trained for {meta['players']} players, not {rules.players}")
    trained = Rules.preset(meta["preset"], meta["players"])
    differ = [name for name in Rules.__dataclass_fields__ if _option(rules, name) != _option(trained, name)]
    if differ:
        changes = ", ".join(f"{name} {_option(rules, name)!r} (trained: {_option(trained, name)!r})" for name in differ)
        raise ModelError(
            f"model {name_or_path!r} was trained under the {meta['preset']!r} preset; these rules differ: {changes}"
        )


def _option(rules: Rules, name: str) -> Any:
    """An option's value in force (the target as the score it stands for)."""
    return rules.target_score if name == "target" else getattr(rules, name)


def load_network(
    name_or_path: str, rules: Rules | None = None, deterministic: bool = True
) -> tuple[NetworkPolicy, dict[str, Any], Path]:
    """The network saved in a model folder (or shipped under that name), checked against
    ``rules``, with its metadata and resolved folder. A go/stop model's card player is named
    in the metadata; :func:`gostop.agents.registry.load_model` builds the whole agent.
    ``"best"`` names the strongest shipped network for ``rules`` (:data:`BEST_MODELS`)."""
    folder = model_folder(resolve_name(name_or_path, rules))
    meta = read_meta(folder)
    if rules is not None:
        _check_rules(name_or_path, meta, rules)
    weights = folder.resolve() / WEIGHTS_FILE
    stat = weights.stat()
    version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    network = NetworkPolicy(
        _load_network(str(weights), version, json.dumps(meta, sort_keys=True)),
        meta["encoding"],
        deterministic,
        name=f"model:{name_or_path}",
    )
    return network, meta, folder.resolve()


@lru_cache(maxsize=16)
def _load_network(path: str, version: tuple[int, int, int], meta_json: str) -> Any:
    """Build the network ``model.json`` describes and fill it with the weights at ``path``, once
    per file version (tournaments build agents per work unit). ``version`` is (inode,
    modification time, size): :func:`save_model` replaces the file with a new one, so a
    rewritten model is loaded again even within one clock tick."""
    from safetensors import SafetensorError, safe_open

    meta = json.loads(meta_json)
    network = _empty_network(meta)
    expected = {k: tuple(v.shape) for k, v in network.state_dict().items()}
    try:
        with safe_open(path, framework="pt", device="cpu") as weights:
            header = weights.metadata() or {}
            shapes = {k: tuple(weights.get_slice(k).get_shape()) for k in weights.keys()}  # noqa: SIM118 (not a dict)
            if shapes != expected:
                raise ModelError(
                    f"{path}: the weights do not fit the network model.json describes "
                    f"({_shape_difference(shapes, expected)})"
                )
            state = {k: weights.get_tensor(k) for k in expected}
            _check_values(path, state)
    except SafetensorError as error:
        raise ModelError(f"{path} is not a safetensors file: {error}") from None
    for key in HEADER_KEYS:
        if header.get(key) != str(meta[key]):
            raise ModelError(
                f"{path}: the weights were saved for {key} {header.get(key)!r}, but model.json says {meta[key]!r}"
            )
    network.load_state_dict(state, strict=True)
    network.set_training_mode(False)
    return network


def _check_values(path: str, state: dict[str, Any]) -> None:
    """ModelError unless every tensor is floating point and finite (an int32, bool, NaN or
    infinite weight would load silently and play nonsense)."""
    import torch

    for key, tensor in state.items():
        if not torch.is_floating_point(tensor):
            raise ModelError(f"{path}: weight {key} is {tensor.dtype}, not floating point")
        if not bool(torch.isfinite(tensor).all()):
            raise ModelError(f"{path}: weight {key} holds NaN or infinite values")


def _empty_network(meta: dict[str, Any]) -> Any:
    """An untrained ``MaskableActorCriticPolicy`` of the architecture in ``meta["network"]``."""
    import gymnasium
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from gostop_env.encodings import OBSERVATION_HIGH

    spec = meta["network"]
    space = gymnasium.spaces.Box(0.0, OBSERVATION_HIGH, encoding_shape(meta["encoding"]), np.float32)
    activation = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}[spec["activation"]]
    return MaskableActorCriticPolicy(
        space,
        gymnasium.spaces.Discrete(spec["actions"]),
        lambda _: 0.0,
        net_arch={"pi": spec["pi"], "vf": spec["vf"]},
        activation_fn=activation,
    )


def _shape_difference(found: dict[str, tuple], expected: dict[str, tuple]) -> str:
    missing, extra = sorted(set(expected) - set(found)), sorted(set(found) - set(expected))
    if missing or extra:
        return f"missing {missing}, unexpected {extra}"
    key = next(k for k in expected if found[k] != expected[k])
    return f"{key} has shape {found[key]}, expected {expected[key]}"


def describe_network(network: Any) -> dict[str, Any]:
    """The ``network`` entry of ``model.json`` for a ``MaskableActorCriticPolicy``."""
    arch = network.net_arch
    pi, vf = (arch["pi"], arch["vf"]) if isinstance(arch, dict) else (arch, arch)
    activations = {"Tanh": "tanh", "ReLU": "relu"}
    name = network.activation_fn.__name__
    if name not in activations:
        raise ModelError(f"model folders store tanh or relu networks, not {name}")
    return {
        "inputs": int(np.prod(network.observation_space.shape)),
        "actions": int(network.action_space.n),
        "pi": [int(w) for w in pi],
        "vf": [int(w) for w in vf],
        "activation": activations[name],
    }


def save_model(network: Any, folder: str | Path, meta: dict[str, Any]) -> Path:
    """Write ``network`` and its ``meta`` (encoding, players, preset, decides, ...) to ``folder``;
    the architecture is read off the network. Readers never see a half-written file."""
    from safetensors.torch import save

    meta = {**{k: v for k, v in meta.items() if k not in ("format", "network")}, "network": describe_network(network)}
    check_meta(meta, "model metadata")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    meta = _card_player_from(folder, meta)
    partial = folder / (WEIGHTS_FILE + ".partial")
    state = {k: v.detach().cpu().contiguous() for k, v in network.state_dict().items()}
    partial.write_bytes(_sorted_metadata(save(state, metadata={k: str(meta[k]) for k in HEADER_KEYS})))
    os.replace(partial, folder / WEIGHTS_FILE)
    text = json.dumps({"format": MODEL_FORMAT, **meta}, indent=2) + "\n"
    (folder / (META_FILE + ".partial")).write_text(text)
    os.replace(folder / (META_FILE + ".partial"), folder / META_FILE)
    return folder


def stable_header(path: str | Path) -> None:
    """Rewrite a safetensors file with its header metadata in sorted key order, in place
    (for files saved before :func:`save_model` sorted it)."""
    path = Path(path)
    path.write_bytes(_sorted_metadata(path.read_bytes()))


def _sorted_metadata(raw: bytes) -> bytes:
    """A safetensors file's bytes with the header's metadata keys in sorted order. safetensors
    writes them in an order that changes from save to save, so without this two runs that
    train equal networks would save different bytes (and fingerprints)."""
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + size])
    if "__metadata__" not in header:
        return raw
    header["__metadata__"] = dict(sorted(header["__metadata__"].items()))  # keeps its place
    text = json.dumps(header, separators=(",", ":")).encode()
    if len(text) > size:  # the same content, compact: never longer than what safetensors wrote
        raise ModelError("unexpected safetensors header")
    return raw[:8] + text.ljust(size, b" ") + raw[8 + size :]


def model_fingerprint(name_or_path: str, _within: tuple[Path, ...] = (), rules: Rules | None = None) -> str:
    """A hash of everything that decides a model's play: its weights and ``model.json``, and
    for a go/stop model its card player's fingerprint too (no torch needed). ``rules`` say
    which model ``"best"`` is."""
    folder = model_folder(resolve_name(name_or_path, rules))
    meta = read_meta(folder)
    digest = hashlib.sha256()
    for name in (META_FILE, WEIGHTS_FILE):
        digest.update(hashlib.sha256((folder / name).read_bytes()).digest())
    target = card_player_model(meta, folder.resolve(), _within)
    if target is not None:
        digest.update(model_fingerprint(target, (*_within, folder.resolve())).encode())
    return digest.hexdigest()[:16]


def card_player_model(meta: dict[str, Any], folder: Path, within: tuple[Path, ...] = ()) -> str | None:
    """The model a go/stop model's card player names (``model:PATH`` gives PATH), or None when
    it names no model (or the model decides everything). ``folder`` is the go/stop model's
    resolved folder and ``within`` the models that lead to it: a chain that comes back to
    one of them is a :class:`ModelError`."""
    if meta["decides"] != "go_stop":
        return None
    kind, _, target = meta["card_player"].strip().partition(":")
    if kind != "model":
        return None
    target = _beside(folder, target)
    chain = (*within, folder)
    if model_folder(target).resolve() in chain:
        raise ModelError(
            f"card_player {meta['card_player']!r} leads back to a model it plays for: "
            f"{' -> '.join(str(p) for p in chain)}"
        )
    return target


def _card_player_from(folder: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """``meta`` with a card player named as a model path relative to the working folder
    rewritten relative to ``folder`` (where :func:`card_player_model` reads it from)."""
    kind, _, target = str(meta.get("card_player", "")).strip().partition(":")
    if meta["decides"] != "go_stop" or kind != "model" or Path(target).is_absolute():
        return meta
    if not (Path(target) / META_FILE).is_file():  # a shipped model's name
        return meta
    return {**meta, "card_player": f"model:{os.path.relpath(Path(target).resolve(), folder.resolve())}"}


def _beside(folder: Path, target: str) -> str:
    """A card player's model path as ``model.json`` names it: absolute, relative to the
    go/stop model's own folder, or else a shipped model's name (never the working folder)."""
    path = Path(target)
    if path.is_absolute() or (SHIPPED_MODELS / target / META_FILE).is_file() and not (folder / path).exists():
        return target
    return str(folder / path)


def convert_pickled_model(folder: str | Path) -> Path:
    """Convert a *trusted* model folder of the old format (``policy.pth``, a pickle) to
    ``policy.safetensors`` and the current ``model.json``. Loading the pickle runs whatever
    it holds: never call this on a folder from someone you do not trust."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    folder = Path(folder)
    if not (folder / PICKLED_FILE).is_file():
        raise ModelError(f"{folder} has no {PICKLED_FILE} to convert")
    meta = _read_json(folder / META_FILE)
    if meta.get("format") not in (PICKLED_FORMAT, MODEL_FORMAT):
        raise ModelError(f"{folder}: unknown model format {meta.get('format')!r}")
    network = MaskableActorCriticPolicy.load(str(folder / PICKLED_FILE), device="cpu")
    return save_model(network, folder, meta)
