"""Training and using Go-Stop agents: behaviour cloning, two PPO trainers, best responses,
learning curves, the command line and the web table.

- :mod:`gostop.train.config`: the TOML run configuration (shipped ones in ``train/configs/``);
- :mod:`gostop.train.bc`: teacher demonstrations recorded in batch, and cloning them;
- :mod:`gostop.train.demo_files`: demonstrations kept batch by batch in the run folder;
- :mod:`gostop.train.launch`: ``gostop train CONFIG``: the config run by the trainer it names;
- :mod:`gostop.train.run`: the run folder both trainers keep:
  config and state, resume, evaluations, league snapshots, the lock;
- :mod:`gostop.train.start`: a new run's first weights (``ppo.init``, behaviour cloning);
- :mod:`gostop.train.ppo`: the MaskablePPO trainer (opponent pool with snapshots,
  checkpoints, TensorBoard logs);
- :mod:`gostop.train.batched`: the batched trainer, masked PPO in torch on the compiled core,
  on rounds of hands from :mod:`gostop.train.rollout`;
- :mod:`gostop.train.asymmetric`: the oracle critic (``ppo.critic = "oracle"``);
- :mod:`gostop.train.exploit`: best responses (``gostop exploit AGENT``);
- :mod:`gostop.train.curves`: learning curves of runs (``gostop curve``);
- :mod:`gostop.train.rllib`: scale-out self-play on Ray RLlib;
- :mod:`gostop.train.table`: the web table (``gostop serve``);
- :mod:`gostop.train.cli`: the ``gostop`` command.

Training requires the ``rl`` extra (``pip install "gostop[rl]"``).
"""
