"""An asymmetric actor-critic: the policy sees the player's own view, the critic sees all cards.

Perfect-information training for imperfect-information play (``ppo.critic = "oracle"``).
The environment hands the learner the ``oracle`` encoding, which is the ``vector``
encoding followed by every hidden card (the opponents' hands, the stock in order). The
policy network reads only its first :data:`OWN_VIEW_INPUTS` numbers, exactly what a
``vector`` network reads, so it never conditions on a hidden card; the value network reads
all of it, which makes its estimate of a position's worth (and so PPO's advantages) far
less noisy than one guessed from the player's view alone.

What is saved as a model folder is the policy alone, as a plain ``vector`` network
(:func:`playable_network`): the critic's inputs do not exist at play time, so the saved
value layers are zeros (they predict 0) and play is unaffected.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor
from torch import nn

from gostop_env.encodings import OBSERVATION_HIGH, encoding_shape, encoding_size

OWN_VIEW_ENCODING = "vector"
CRITIC_ENCODING = "oracle"
OWN_VIEW_INPUTS = encoding_size(OWN_VIEW_ENCODING)


class SplitMlpExtractor(nn.Module):
    """SB3's policy and value MLPs over different inputs: the policy net reads the first
    ``actor_inputs`` features, the value net all ``critic_inputs`` (layer names as in
    ``MlpExtractor``, so the policy's weights copy one to one into a plain network)."""

    def __init__(self, actor_inputs: int, critic_inputs: int, net_arch: Any, activation_fn: type[nn.Module]):
        super().__init__()
        self.actor_inputs = actor_inputs
        actor = MlpExtractor(actor_inputs, net_arch, activation_fn)
        critic = MlpExtractor(critic_inputs, net_arch, activation_fn)
        self.policy_net, self.value_net = actor.policy_net, critic.value_net
        self.latent_dim_pi, self.latent_dim_vf = actor.latent_dim_pi, critic.latent_dim_vf

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[..., : self.actor_inputs])

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features)


class OracleCriticPolicy(MaskableActorCriticPolicy):
    """A ``MaskableActorCriticPolicy`` over the ``oracle`` encoding whose policy reads only the
    ``vector`` prefix (the player's own view) and whose value network reads everything."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if self.features_dim <= OWN_VIEW_INPUTS:
            raise ValueError(f"the oracle critic reads the {CRITIC_ENCODING!r} encoding: {self.features_dim} inputs")

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SplitMlpExtractor(OWN_VIEW_INPUTS, self.features_dim, self.net_arch, self.activation_fn)


def playable_network(policy: Any) -> Any:
    """``policy`` as a network a player can run: itself, or for an :class:`OracleCriticPolicy`
    a plain ``vector`` network with its policy weights and a value head of zeros. Made
    without drawing from torch's random generator (the training run's stream is unchanged)."""
    if not isinstance(policy, OracleCriticPolicy):
        return policy
    with torch.random.fork_rng():
        plain = MaskableActorCriticPolicy(
            gymnasium.spaces.Box(0.0, OBSERVATION_HIGH, encoding_shape(OWN_VIEW_ENCODING), np.float32),
            policy.action_space,
            lambda _: 0.0,
            net_arch=policy.net_arch,
            activation_fn=policy.activation_fn,
        )
    state = plain.state_dict()
    for key, value in policy.state_dict().items():
        state[key] = value.clone() if is_actor_weight(key) else torch.zeros_like(state[key])
    plain.load_state_dict(state, strict=True)
    plain.set_training_mode(False)
    return plain


def is_actor_weight(key: str) -> bool:
    """Whether a ``MaskableActorCriticPolicy`` state-dict entry belongs to the policy (not the critic)."""
    return key.startswith(("mlp_extractor.policy_net.", "action_net."))
