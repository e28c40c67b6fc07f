"""Run a training config with the trainer it names: what ``gostop train`` calls, for Python
users too (``gostop.train.launch.train(TrainConfig.load("scratch"))``)."""

from __future__ import annotations

from pathlib import Path

from .config import TrainConfig
from .run import Log


def train(config: TrainConfig, resume: bool = False, progress: bool = True, log: Log = print) -> Path:
    """Run (or resume) the training ``config`` describes with the trainer it names
    (``trainer``: :func:`gostop.train.ppo.train` or :func:`gostop.train.batched.train_batched`);
    return the run folder. ``gostop train`` runs this."""
    if config.trainer == "batched":
        from .batched import train_batched

        return train_batched(config, resume=resume, progress=progress, log=log)
    from .ppo import train as train_sb3

    return train_sb3(config, resume=resume, progress=progress, log=log)
