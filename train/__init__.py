"""Training Go-Stop agents: behaviour cloning and MaskablePPO league self-play.

- :mod:`gostop.train.config`: the TOML run configuration (shipped ones in ``train/configs/``);
- :mod:`gostop.train.bc`: teacher demonstrations recorded in batch, and cloning them;
- :mod:`gostop.train.ppo`: the training run (``gostop train CONFIG``): opponent pool with
  snapshots, evaluation tournaments, checkpoints, resume, TensorBoard logs.

Requires the ``rl`` extra (``pip install "gostop[rl]"``).
"""
