"""Agents backed by trained networks, and the model folders they are saved in.

A *model folder* holds ``policy.pth`` (an sb3-contrib ``MaskableActorCriticPolicy``, saved
with its ``save`` method) and ``model.json`` (what it was trained for: format, encoding,
players, preset; ``decides``: ``"all"`` or ``"go_stop"``; for go/stop models the name of
the card player it sits on; and free-form training metadata). :func:`load_model` turns a
folder, or the name of a model shipped in ``agents/models/``, into a policy;
``make_agent("model:NAME_OR_PATH")`` does the same from the command line. A model plays
only the player count it was trained for (an error otherwise); its preset is recorded but
not enforced, so a model can be measured under other rules.

Requires torch and sb3-contrib (``pip install "gostop[rl]"``).
"""
from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from gostop_env.core import Phase, Rules
from gostop_env.encodings import section_slices
from gostop_env.policy import Policy

MODEL_FORMAT = "gostop-model/1"
POLICY_FILE, META_FILE = "policy.pth", "model.json"
SHIPPED_MODELS = Path(__file__).parent / "models"


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


class GoStopComposite:
    """A card player for every decision but go/stop, which ``go_stop`` makes (``vector`` encoding)."""

    encoding = "vector"

    def __init__(self, card_player: Policy, go_stop: Policy, name: str = "model"):
        for policy in (card_player, go_stop):
            if policy.encoding != "vector":
                raise ValueError(f"go/stop composites read the vector encoding, not {policy.encoding!r}")
        self.card_player, self.go_stop, self.name = card_player, go_stop, name

    def __call__(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        at_go_stop = observations[:, _PHASE].argmax(axis=1) == Phase.GO_STOP
        actions = np.full(len(masks), -1, np.int64)
        for rows, policy in ((at_go_stop, self.go_stop), (~at_go_stop, self.card_player)):
            if rows.any():
                actions[rows] = policy(observations[rows], masks[rows], rng)
        return actions


_PHASE = section_slices("vector")["phase"]


def model_folder(name_or_path: str) -> Path:
    """The folder of a shipped model name or of a path; ValueError when it holds no model."""
    folder = Path(name_or_path)
    if not (folder / META_FILE).exists() and (SHIPPED_MODELS / name_or_path / META_FILE).exists():
        folder = SHIPPED_MODELS / name_or_path
    if not (folder / META_FILE).exists() or not (folder / POLICY_FILE).exists():
        shipped = sorted(p.name for p in SHIPPED_MODELS.glob("*") if (p / META_FILE).exists())
        raise ValueError(f"no model at {name_or_path!r} (a folder with {META_FILE} and {POLICY_FILE}, "
                         f"or a shipped model: {shipped})")
    return folder


def read_meta(folder: str | Path) -> dict[str, Any]:
    meta = json.loads((Path(folder) / META_FILE).read_text())
    if meta.get("format") != MODEL_FORMAT:
        raise ValueError(f"{folder}: unknown model format {meta.get('format')!r} (expected {MODEL_FORMAT})")
    return meta


def load_model(name_or_path: str, rules: Rules | None = None, deterministic: bool = True) -> Policy:
    """The policy saved in a model folder (or shipped under that name), checked against ``rules``;
    with ``deterministic=False`` the network samples its moves (see :class:`NetworkPolicy`)."""
    folder = model_folder(name_or_path)
    meta = read_meta(folder)
    if rules is not None and rules.players != meta["players"]:
        raise ValueError(f"model {name_or_path!r} was trained for {meta['players']} players, not {rules.players}")
    weights = folder.resolve() / POLICY_FILE
    stat = weights.stat()
    version = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
    network = NetworkPolicy(_load_network(str(weights), version), meta["encoding"],
                            deterministic, name=f"model:{name_or_path}")
    if meta["decides"] == "all":
        return network
    from .registry import make_agent

    return GoStopComposite(make_agent(meta["card_player"], rules), network, name=f"model:{name_or_path}")


@lru_cache(maxsize=16)
def _load_network(path: str, version: tuple[int, int, int]) -> Any:
    """Load a saved policy network once per file version (tournaments build agents per work
    unit). ``version`` is (inode, modification time, size): :func:`save_model` replaces the
    file with a new one, so a rewritten model is loaded again even within one clock tick."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    network = MaskableActorCriticPolicy.load(path, device="cpu")
    network.set_training_mode(False)
    return network


def save_model(network: Any, folder: str | Path, meta: dict[str, Any]) -> Path:
    """Write ``network`` and its ``meta`` (encoding, players, preset, decides, ...) to ``folder``."""
    required = {"encoding", "players", "preset", "decides"}
    if not required <= set(meta):
        raise ValueError(f"model metadata needs {sorted(required)}, got {sorted(meta)}")
    if meta["decides"] == "go_stop" and "card_player" not in meta:
        raise ValueError("a go/stop model needs the name of its card_player")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / (POLICY_FILE + ".partial")
    network.save(str(partial))
    os.replace(partial, folder / POLICY_FILE)  # readers never see a half-written file
    (folder / META_FILE).write_text(json.dumps({"format": MODEL_FORMAT, **meta}, indent=2) + "\n")
    return folder
