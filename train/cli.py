"""The ``gostop`` command line.

- ``gostop simulate``: play many hands with random legal moves on the vectorised core
  and print what happened (results, payments, event rates, speed).
- ``gostop deal``: deal one hand from a seed and print it move by move.
- ``gostop compare A B [--players 3]``: two agents (by name, e.g. ``greedy``, ``random``,
  ``greedy:stop=threshold:k=9:gos=1``) over duplicate 2-player deals.
- ``gostop tournament A B [C ...]``: duplicate-deal tournament, leaderboard and files.
- ``gostop play --opponent greedy [--players 3]``: play a hand in the terminal.
- ``gostop replay FILE``: print a saved hand turn by turn.
- ``gostop serve [--port 8000] [--opponent AGENT] [--replays DIR]``: a web table in the
  browser to play agents and watch replays (``pip install ".[table]"``).
- ``gostop train CONFIG``: training from a TOML config (``train/configs/``; behaviour
  cloning, MaskablePPO or the batched trainer; ``--set ppo.timesteps=100000`` overrides,
  ``--resume``).
- ``gostop curve RUN [RUN ...] --against AGENT``: learning curves of training runs (CSV, PNG).
- ``gostop go-stop sweep|values``: go/stop studies (threshold sweeps against a reference
  agent; go and stop values with intervals at every decision of many hands, saved as CSV).
- ``gostop train-rllib``: masked PPO self-play on Ray RLlib (``pip install ".[rllib]"``).
- ``gostop convert-model DIR``: convert a *trusted* model folder of the old pickle format
  (``policy.pth``) to ``policy.safetensors``, which loads without running code.

Torch runs on one thread unless ``OMP_NUM_THREADS`` says otherwise (small networks on few
cores run fastest that way).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from gostop_env.core import (
    Event,
    GameBatch,
    IllegalActionError,
    ReferenceGame,
    Result,
    Rules,
    action_name,
    batch_class,
    card_name,
    random_legal_actions,
)
from gostop_env.files import writable_file, writable_folder
from gostop_env.policy import PolicyActionError


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``gostop`` command line; return its exit status. A bad option or value ends in
    ``SystemExit(2)`` with a message naming the command; an agent's illegal move, ``1``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        return int(args.run(args))
    except (IllegalActionError, PolicyActionError) as error:  # ValueErrors too, but not the user's fault
        _fail(args.command, f"an agent chose an illegal move (a fault of that agent, not of the command): {error}", 1)
    except ValueError as error:
        _fail(args.command, str(error), 2)


def _fail(command: str, message: str, status: int) -> NoReturn:
    print(f"gostop {command}: error: {message}", file=sys.stderr)
    raise SystemExit(status)


def build_parser() -> argparse.ArgumentParser:
    """The ``gostop`` parser: one subcommand each, its handler in ``run``."""
    parser = argparse.ArgumentParser(
        prog="gostop", description="Go-Stop for reinforcement learning: play, compare, train and study agents."
    )
    commands = _Commands(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    _add_play_commands(commands)
    _add_training_commands(commands)
    _add_study_commands(commands)
    return parser


def _add_play_commands(commands: Any) -> None:
    """simulate, deal, compare, tournament, play, replay."""
    simulate = commands.add_parser("simulate", help="play random hands in batch and summarise them")
    _rules_arguments(simulate)
    simulate.add_argument("--hands", type=_positive, default=20_000, help="hands to play")
    simulate.add_argument("--batch", type=_positive, default=1024, help="games stepped together")
    _seed_option(simulate)
    _backend_option(simulate)
    deal = commands.add_parser("deal", help="deal one hand and print it, played with random moves")
    _rules_arguments(deal)
    _seed_option(deal)
    compare = commands.add_parser("compare", help="two agents over duplicate deals (3 players: A against two B's)")
    compare.add_argument("agents", nargs=2, help="agent names, e.g. greedy random")
    compare.add_argument("--preset", default="seed", help="rule preset: seed, korean or matgo (2 players)")
    compare.add_argument("--players", type=int, default=2, help="2, or 3: the first agent against two of the second")
    compare.add_argument("--deals", type=_positive, default=5000, help="duplicate deals (matches, with --match-hands)")
    _match_options(compare, "play matches of N hands instead of single hands (2 players)")
    _seed_option(compare)
    _backend_option(compare)
    tournament = commands.add_parser("tournament", help="duplicate-deal tournament between agents")
    tournament.add_argument("agents", nargs="+", help="agent names (two or more)")
    _game_options(tournament)
    tournament.add_argument(
        "--deals", type=_positive, default=2000, help="duplicate deals, each played under every seating"
    )
    _seed_option(tournament)
    tournament.add_argument("--chunk", type=_positive, default=500, help="deals per work unit")
    tournament.add_argument("--workers", type=_positive, default=1, help="parallel worker processes")
    tournament.add_argument("--out", default="tournament", help="output folder (resumes from it)")
    tournament.add_argument("--replays", type=_natural, default=0, help="save the hands with the largest payments")
    tournament.add_argument(
        "--decisions",
        action="store_true",
        help="record every go/stop decision with its features and outcome (decisions.csv)",
    )
    tournament.add_argument("--wide", action="store_true", help="print every column (the files always have them all)")
    tournament.add_argument("--ray", action="store_true", help="run the work units on Ray (pip install '.[ray]')")
    _match_options(tournament, "matches of N hands instead of hands (--deals: matches)")
    _backend_option(tournament)
    play = commands.add_parser("play", help="play a hand in the terminal against agents")
    play.add_argument(
        "--opponent",
        default=None,
        help="agent name for every other seat (default: model:best where shipped, else greedy)",
    )
    _game_options(play)
    play.add_argument("--seat", type=int, default=0, help="your seat (0 deals and moves first)")
    _seed_option(play, None)
    play.add_argument("--save", default=None, help="save the hand as a replay JSON file")
    replay = commands.add_parser("replay", help="print a saved hand turn by turn")
    replay.add_argument("file", help="a replay JSON file (gostop play --save, gostop tournament --replays)")
    serve = commands.add_parser("serve", help="a web table: play agents, watch replays (pip install '.[table]')")
    serve.add_argument("--port", type=_port, default=8000, help="port to listen on (1..65535)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (only this machine by default)")
    serve.add_argument(
        "--opponent",
        default=None,
        help="the default agent at new tables (default: model:best where shipped, else greedy)",
    )
    serve.add_argument(
        "--opponents",
        default=None,
        help="comma-separated agents the page may ask for (default: the shipped agents at their own settings)",
    )
    serve.add_argument(
        "--time-budget", type=_seconds, default=10.0, help="seconds of opponents' moves per request (default 10)"
    )
    serve.add_argument("--replays", default=None, help="a folder of replay files to watch")
    simulate.set_defaults(run=lambda a: _simulate(_rules(a), a.hands, a.batch, a.seed, a.backend))
    deal.set_defaults(run=lambda a: _deal(_rules(a), a.seed))
    compare.set_defaults(run=_compare_command)
    tournament.set_defaults(run=_tournament)
    play.set_defaults(run=_play)
    replay.set_defaults(run=lambda a: _replay(a.file))
    serve.set_defaults(run=_serve)


def _add_training_commands(commands: Any) -> None:
    """train, train-rllib, convert-model."""
    train = commands.add_parser("train", help="train an agent (behaviour cloning, MaskablePPO or batched PPO)")
    train.add_argument("config", help="a TOML config file, or a shipped config's name (e.g. quick)")
    train.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key, e.g. --set ppo.timesteps=100000 (repeatable)",
    )
    train.add_argument("--out", default=None, help="run folder (overrides the config's out)")
    train.add_argument("--resume", action="store_true", help="continue the run in the out folder")
    train.add_argument("--overwrite", action="store_true", help="delete the out folder's earlier run first")
    train.add_argument("--quiet", action="store_true", help="no progress bars")
    rllib = commands.add_parser("train-rllib", help="masked PPO self-play on Ray RLlib (pip install '.[rllib]')")
    rllib.add_argument("--out", default="runs/rllib", help="output folder")
    rllib.add_argument("--iterations", type=_positive, default=20, help="PPO iterations")
    rllib.add_argument("--env-runners", type=_natural, default=0, help="rollout processes (0: in the driver)")
    rllib.add_argument("--envs-per-runner", type=_positive, default=8, help="games stepped together per process")
    _game_options(rllib)
    _seed_option(rllib)
    rllib.add_argument("--batch", type=_positive, default=4000, help="env steps per iteration")
    rllib.add_argument(
        "--eval-deals",
        type=_natural,
        default=200,
        help="duplicate deals against greedy after each iteration (0: none)",
    )
    exploit = commands.add_parser("exploit", help="train a best response to a frozen agent and report what it wins")
    exploit.add_argument("agent", help="the agent to exploit, e.g. greedy:stop=ev:n=16")
    exploit.add_argument("--hours", type=_hours, default=1.0, help="training time of the best response (default 1)")
    exploit.add_argument("--deals", type=_positive, default=2000, help="duplicate deals of the final measurement")
    exploit.add_argument("--out", default=None, help="run folder (default runs/exploit/<agent>)")
    exploit.add_argument("--quiet", action="store_true", help="no progress bar")
    _game_options(exploit)
    _seed_option(exploit)
    exploit.set_defaults(run=_exploit)
    curve = commands.add_parser("curve", help="learning curves of training runs against one agent (CSV and PNG)")
    curve.add_argument("runs", nargs="+", help="training run folders")
    curve.add_argument("--against", required=True, help="the evaluation opponent, as named in eval.against")
    curve.add_argument("--labels", default=None, help="comma-separated names of the runs in the figure")
    curve.add_argument("--out", default="curves", help="folder for curve.csv and curve.png")
    curve.set_defaults(run=_curve)
    convert = commands.add_parser(
        "convert-model", help="convert a trusted old-format model folder (policy.pth) to policy.safetensors"
    )
    convert.add_argument("folder", help="the model folder; loading its pickle runs its code: only one you trust")
    train.set_defaults(run=_train)
    rllib.set_defaults(run=_train_rllib)
    convert.set_defaults(run=lambda a: _convert_model(a.folder))


def _add_study_commands(commands: Any) -> None:
    """go-stop sweep and go-stop values."""
    study = commands.add_parser("go-stop", help="go/stop studies: threshold sweeps, go and stop values")
    kinds = _Commands(study.add_subparsers(dest="study", required=True, metavar="STUDY"))
    sweep = kinds.add_parser("sweep", help="threshold rules (and other agents) against a reference agent")
    sweep.add_argument("--card-player", default="greedy", help="card play of the threshold rules")
    sweep.add_argument("--against", default="greedy", help="the reference agent")
    sweep.add_argument("--also", nargs="*", default=[], help="more agents to compare, e.g. greedy:stop=ev:n=8")
    for key, default in (("k", "none"), ("gos", "none 1 2 3"), ("stock", "none 2 4 6 8"), ("margin", "none 1 3 5")):
        sweep.add_argument(
            f"--{key}",
            nargs="+",
            default=default.split(),
            metavar="N",
            help=f"grid values of the threshold rule's {key} ('none' leaves it out; default {default})",
        )
    sweep.add_argument("--deals", type=_positive, default=2000, help="duplicate deals per rule")
    _seed_option(sweep)
    sweep.add_argument("--workers", type=_positive, default=1, help="parallel worker processes")
    sweep.add_argument("--out", default=None, help="also write the table as CSV (or .parquet) here")
    values = kinds.add_parser("values", help="go and stop values at every go/stop decision of many hands")
    values.add_argument("agents", nargs="+", help="one agent per seat (or one for every seat)")
    _game_options(values)
    values.add_argument("--hands", type=_positive, default=1000, help="hands to play")
    values.add_argument("--samples", type=_positive, default=32, help="determinized rollouts per decision")
    values.add_argument("--perfect", action="store_true", help="also the perfect-information values")
    _seed_option(values)
    values.add_argument("--out", default="go_stop_values.csv", help="CSV or .parquet file")
    values.add_argument(
        "--histogram", default=None, help="also draw the payments of going and of stopping, every sample, as a PNG"
    )
    values.add_argument(
        "--match-hands-left",
        type=_natural,
        default=None,
        help="also the chance of winning a match by going and by stopping, as if every decision were in a match "
        "with this many hands after it (2 players; with --lead)",
    )
    values.add_argument("--lead", type=int, default=0, help="with --match-hands-left: the deciding player's lead")
    sweep.set_defaults(run=_sweep)
    values.set_defaults(run=_values)


def _rules(args: argparse.Namespace) -> Rules:
    jokers = {} if args.jokers is None else {"jokers": args.jokers}
    return Rules.preset(args.preset, players=args.players, **jokers)


def _integer(text: str, lowest: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < lowest:
        raise argparse.ArgumentTypeError(f"must be {what}, got {value}")
    return value


def _seed(text: str) -> int:
    """A seed: an integer >= 0 (NumPy's generators take no negative seed)."""
    return _integer(text, 0, "a non-negative integer (seeds are >= 0)")


def _port(text: str) -> int:
    port = _integer(text, 1, "a port 1..65535")
    if port > 65535:
        raise argparse.ArgumentTypeError(f"a port is 1..65535, got {port}")
    return port


def _span(unit: str, most: float) -> Any:
    """An argparse type: a number of ``unit`` above 0 and at most ``most``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number of {unit}, got {text!r}") from None
        if not (0 < value <= most):
            raise argparse.ArgumentTypeError(f"expected 0 < {unit} <= {most:g}, got {text!r}")
        return value

    return parse


_seconds, _hours = _span("seconds", 3600), _span("hours", 100)


def _positive(text: str) -> int:
    return _integer(text, 1, "at least 1")


def _natural(text: str) -> int:
    return _integer(text, 0, "at least 0")


class _Commands:
    """Subcommands that show their defaults in --help and describe themselves."""

    def __init__(self, subparsers: Any):
        self.subparsers = subparsers

    def add_parser(self, name: str, help: str) -> argparse.ArgumentParser:  # noqa: A002 (argparse's name)
        parser: argparse.ArgumentParser = self.subparsers.add_parser(
            name,
            help=help,
            description=help[0].upper() + help[1:] + ".",
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )
        return parser


def _backend_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend",
        type=_backend,
        default=None,
        help="the core's engine: numpy, numba or numba-parallel (default: $GOSTOP_BACKEND, else the fastest)",
    )


def _backend(text: str) -> str:
    try:
        return batch_class(text).backend
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _match_options(parser: argparse.ArgumentParser, about: str) -> None:
    """``--match-hands`` (``about`` says what it does) and ``--bankroll``."""
    parser.add_argument("--match-hands", type=_positive, default=None, help=about)
    parser.add_argument(
        "--bankroll", type=_positive, default=None, help="with --match-hands: a match ends once a bankroll is lost"
    )


def _seed_option(parser: argparse.ArgumentParser, default: int | None = 0) -> None:
    what = "seed of every random choice" + ("" if default is not None else " (none: a fresh one)")
    parser.add_argument("--seed", type=_seed, default=default, help=what)


def _game_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--players", type=int, default=2, help="2 or 3")
    parser.add_argument("--preset", default="seed", help="rule preset: seed, korean or matgo (2 players)")


def _rules_arguments(parser: argparse.ArgumentParser) -> None:
    _game_options(parser)
    parser.add_argument(
        "--jokers", type=int, default=None, help="jokers (bonus cards) in the deck: 0, 1 or 2 (default: the preset's)"
    )


def _simulate(rules: Rules, hands: int, batch_size: int, seed: int, backend: str | None = None) -> int:
    if hands < 1 or batch_size < 1:
        raise ValueError("--hands and --batch must be at least 1")
    rng = np.random.default_rng(seed)
    totals = _Totals(rules.players)
    start = time.perf_counter()
    while totals.hands < hands:
        batch = GameBatch.from_seed(rules, rng, min(batch_size, hands - totals.hands), backend=backend)
        totals.add(batch.deal_events.counts, batch.deal_events.payments)
        while not batch.done.all():
            actions = random_legal_actions(batch.legal_bits, rng)
            totals.decisions += int((actions >= 0).sum())
            events = batch.step(actions)
            totals.add(events.counts, events.payments)
        totals.finish(batch)
        print(f"\r{totals.hands}/{hands} hands", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    totals.report(rules, time.perf_counter() - start)
    return 0


class _Totals:
    """Running sums over simulated hands."""

    def __init__(self, players: int):
        self.hands = self.decisions = 0
        self.results = np.zeros(len(Result), np.int64)
        self.events = np.zeros((players, len(Event)), np.int64)
        self.chips = np.zeros(players, np.int64)
        self.abs_payment = 0

    def add(self, counts: np.ndarray, payments: np.ndarray) -> None:
        self.events += counts.sum(axis=0)
        self.chips += payments.sum(axis=0)
        self.abs_payment += int(np.abs(payments).sum())

    def finish(self, batch: GameBatch) -> None:
        self.hands += len(batch)
        self.results += np.bincount(batch.result, minlength=len(Result))

    def report(self, rules: Rules, seconds: float) -> None:
        names = {r: r.name.lower() for r in Result if r != Result.ONGOING}
        print(f"{self.hands} random hands, {rules.players} players, rules {rules.to_dict()}")
        print(f"{self.decisions} decisions in {seconds:.1f} s ({self.decisions / seconds:,.0f} decisions/s)\n")
        print("| result | hands | share |\n|---|---|---|")
        for code, name in names.items():
            print(f"| {name} | {self.results[code]} | {self.results[code] / self.hands:.1%} |")
        print("\n| seat | mean chips/hand | " + " | ".join(e.name.lower() for e in Event) + " |")
        print("|---" * (len(Event) + 2) + "|")
        for seat in range(rules.players):
            rates = " | ".join(f"{v / self.hands:.3f}" for v in self.events[seat])
            print(f"| {seat} | {self.chips[seat] / self.hands:+.3f} | {rates} |")
        print(f"\nmean chips changing hands per hand: {self.abs_payment / 2 / self.hands:.2f}")


def _compare_command(args: argparse.Namespace) -> int:
    if args.match_hands is None:
        if args.bankroll is not None:
            raise ValueError("--bankroll needs --match-hands")
        return _compare(args.agents, args.preset, args.deals, args.seed, args.backend, args.players)
    return _compare_matches(args)


def _compare_matches(args: argparse.Namespace) -> int:
    from gostop.agents import make_agent
    from gostop.agents.compare import compare_matches
    from gostop_env.core.match import MatchFormat

    rules = Rules.preset(args.preset, players=args.players)
    if rules.players != 2:
        raise ValueError("--match-hands: match comparisons are for 2 players")
    fmt = MatchFormat(args.match_hands, args.bankroll).check(rules)
    first, second = (make_agent(name, rules) for name in args.agents)
    start = time.perf_counter()
    result = compare_matches(first, second, fmt, args.deals, seed=args.seed, rules=rules, backend=args.backend)
    print(
        f"{args.agents[0]} against {args.agents[1]} (2 players, {args.preset} rules), "
        f"{2 * args.deals} matches in {time.perf_counter() - start:.1f} s:"
    )
    print(f"{args.agents[0]}: {result}")
    return 0


def _compare(names: list[str], preset: str, deals: int, seed: int, backend: str | None = None, players: int = 2) -> int:
    from gostop.agents import compare, make_agent

    if deals < 2:
        raise ValueError("--deals must be at least 2")
    rules = Rules.preset(preset, players=players)
    first, second = (make_agent(name, rules) for name in names)
    start = time.perf_counter()
    result = compare(first, second, deals, seed=seed, rules=rules, backend=backend)
    lineup = names[1] if players == 2 else f"two {names[1]}"
    hands = deals * (2 if players == 2 else 3)
    print(
        f"{names[0]} against {lineup} ({players} players, {preset} rules), {hands} hands in "
        f"{time.perf_counter() - start:.1f} s:"
    )
    print(f"{names[0]}: {result}")
    return 0


def _tournament(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from gostop.agents.report import COLUMNS, COMPACT, leaderboard_markdown, plots_available, write_outputs
    from gostop.agents.tournament import TournamentConfig, run_tournament

    config = TournamentConfig(
        tuple(args.agents),
        args.players,
        args.preset,
        args.deals,
        args.seed,
        args.chunk,
        args.workers,
        args.replays,
        args.decisions,
        args.backend,
        args.match_hands,
        args.bankroll,
    )
    start = time.perf_counter()
    results = run_tournament(
        config,
        args.out,
        progress=lambda units, total: tqdm(units, total=total, desc="units", unit="unit", file=sys.stderr),
        runner="ray" if args.ray else "local",
    )
    print(leaderboard_markdown(results, COLUMNS if args.wide else COMPACT))
    written = write_outputs(results, args.out)
    replays = [p for p in written if p.parent.name == "replays"]
    files = [str(p) for p in written if p not in replays]
    print(
        f"\n{time.perf_counter() - start:.1f} s; wrote {', '.join(files)}"
        + (f" and {len(replays)} replays" if replays else "")
    )
    if not plots_available():
        print("(no PNG plots: matplotlib is not installed; pip install 'gostop[plots]')")
    return 0


def _play(args: argparse.Namespace) -> int:
    from gostop.agents import make_agent
    from gostop.agents.registry import default_opponent
    from gostop_env.human import LeftGame, play_in_terminal

    rules = Rules.preset(args.preset, players=args.players)
    name = default_opponent(rules) if args.opponent is None else args.opponent
    opponents = [make_agent(name, rules) for _ in range(rules.players - 1)]
    print(f"playing against {name}" + (" (each other seat)" if rules.players > 2 else ""))
    if args.save:
        writable_file(args.save)  # before the hand, not after it
    try:
        replay = play_in_terminal(rules, opponents, seed=args.seed, seat=args.seat)
    except LeftGame as left:
        print(left)
        return 1
    except KeyboardInterrupt:
        print("\nleft the hand (interrupted); nothing saved")
        return 130
    if args.save:
        replay.save(args.save)
        print(f"saved the hand to {args.save}")
    return 0


def _train(args: argparse.Namespace) -> int:
    from gostop.train.config import TrainConfig

    overrides = args.set + ([f"out={_toml_string(args.out)}"] if args.out else [])
    config = TrainConfig.load(args.config, overrides)
    if args.overwrite and args.resume:
        raise ValueError("--overwrite and --resume exclude each other")
    if args.overwrite:
        _remove_run(Path(config.out))
    start = time.perf_counter()
    from tqdm import tqdm

    from gostop.train.launch import train

    out = train(config, resume=args.resume, progress=not args.quiet, log=tqdm.write)  # lines above the bars
    logs = f", TensorBoard logs in {out / 'tb'}" if (out / "tb").exists() else ""
    print(
        f"\ntrained in {time.perf_counter() - start:.0f} s; the model: model:{out / 'model'} "
        f"(evaluations in {out / 'eval.jsonl'}{logs})"
    )
    return 0


def _sweep(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from gostop.agents.decisions import check_table_path, save_table
    from gostop.agents.studies import threshold_rules, versus

    if args.out:
        check_table_path(args.out)  # before the sweep, not after it
    grid = {key: [_grid_value(key, v) for v in getattr(args, key)] for key in ("k", "gos", "stock", "margin")}
    names = [*threshold_rules(args.card_player, **grid), *args.also]
    rows = versus(
        names,
        args.against,
        args.deals,
        args.seed,
        workers=args.workers,
        progress=lambda agents: tqdm(agents, desc="rules", unit="rule", file=sys.stderr),
    )
    print(f"against {args.against}, {args.deals} duplicate deals each (seed rules, 2 players)\n")
    print("| agent | chips/hand | 95% CI | win rate | go rate | go success |\n|---|---|---|---|---|---|")
    for r in rows:
        low, high = r["chips_ci"]
        print(
            f"| {r['agent']} | {r['chips']:+.3f} | {low:+.3f} .. {high:+.3f} | {r['win_rate']:.1%} "
            f"| {r['go_rate']:.1%} | {r['go_success']:.1%} |"
        )
    if args.out:
        table = [_with_interval_bounds(r) for r in rows]
        save_table({k: [r[k] for r in table] for k in table[0]}, args.out)
    return 0


def _grid_value(key: str, text: str) -> int | None:
    """One value of a sweep grid: 'none' or an integer >= 0."""
    if text == "none":
        return None
    if not text.isdigit():
        raise ValueError(f"--{key} takes 'none' or integers >= 0, got {text!r}")
    return int(text)


def _with_interval_bounds(row: dict) -> dict:
    """A sweep row with its ``chips_ci`` pair as two numeric columns, ``chips_low`` and ``chips_high``."""
    flat = {}
    for key, value in row.items():
        if key == "chips_ci":
            flat["chips_low"], flat["chips_high"] = value
        else:
            flat[key] = value
    return flat


def _values(args: argparse.Namespace) -> int:
    from gostop.agents import make_agent
    from gostop.agents.decisions import check_table_path, save_table
    from gostop.agents.studies import advantage_by, decision_values

    check_table_path(args.out)  # before the work, not after it
    if args.histogram is not None:
        _check_png(args.histogram)
    rules = Rules.preset(args.preset, players=args.players)
    if len(args.agents) not in (1, rules.players):
        raise ValueError(f"give one agent, or one per seat ({rules.players})")
    policies = [make_agent(name, rules) for name in args.agents * (rules.players if len(args.agents) == 1 else 1)]
    if args.match_hands_left is not None and rules.players != 2:
        raise ValueError("--match-hands-left: match-aware values are for 2 players")
    table, values = decision_values(rules, policies, args.hands, args.samples, args.seed, args.perfect)
    if args.match_hands_left is not None:
        from gostop.agents.match_stop import match_win_chances, match_win_table

        go, stop = match_win_chances(values, match_win_table(rules), args.match_hands_left, args.lead)
        table.update(go_match_win=go, stop_match_win=stop)
    path = save_table(table, args.out)
    print(f"{len(table['go'])} go/stop decisions in {args.hands} hands, {args.samples} samples each; wrote {path}\n")
    print("| cards left in the stock | decisions | advantage of going | 95% CI | going pays |\n|---|---|---|---|---|")
    for r in advantage_by(table, "stock_left", [0, 4, 8, 12, 16]):
        low, high = r["advantage_ci"]
        print(
            f"| {r['stock_left']} | {r['decisions']} | {r['advantage']:+.2f} | {low:+.2f} .. {high:+.2f} "
            f"| {r['going_pays']:.0%} |"
        )
    print("\nPayments, every sample of every decision:\n")
    print("| choice | mean | 10% | median | 90% | chance of paying |\n|---|---|---|---|---|---|")
    for choice in ("go", "stop"):
        chips = values.chips(choice)
        q10, q50, q90 = np.quantile(chips, (0.1, 0.5, 0.9))
        print(f"| {choice} | {chips.mean():+.2f} | {q10:+.0f} | {q50:+.0f} | {q90:+.0f} | {(chips < 0).mean():.1%} |")
    if args.match_hands_left is not None:
        go, stop = table["go_match_win"], table["stop_match_win"]
        print(
            f"\nIn a match {args.lead:+d} chips ahead with {args.match_hands_left} hands after this one: "
            f"the chance of winning it is {go.mean():.1%} by going and {stop.mean():.1%} by stopping on average; "
            f"going is the better chance at {(go > stop).mean():.0%} of the decisions."
        )
    if args.histogram is not None:
        print(f"wrote {_payment_histogram(values, args.histogram)}")
    return 0


def _check_png(path: str) -> None:
    if not path.endswith(".png"):
        raise ValueError(f"--histogram writes a PNG: give a path ending in .png, got {path!r}")
    try:
        import matplotlib  # noqa: F401
    except ModuleNotFoundError:
        raise ModuleNotFoundError('--histogram needs matplotlib: pip install "gostop[plots]"') from None


def _payment_histogram(values: Any, path: str) -> str:
    """The payments of going and of stopping, every sample pooled, as a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    go, stop = values.chips("go").ravel(), values.chips("stop").ravel()
    edges = np.arange(min(go.min(), stop.min()) - 0.5, max(go.max(), stop.max()) + 1.5)
    figure, axes = plt.subplots(figsize=(8, 4))
    axes.hist([go, stop], bins=edges, label=["go", "stop"], density=True)
    axes.set_xlabel("chips the deciding seat is paid (negative: it pays)")
    axes.set_ylabel("share of samples")
    axes.set_title("Payments of going and of stopping")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def _serve(args: argparse.Namespace) -> int:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ModuleNotFoundError:
        raise ValueError("serve needs the web table's packages: pip install 'gostop[table]'") from None
    from gostop.train.table import serve

    if args.replays is not None and not Path(args.replays).is_dir():
        raise ValueError(f"--replays {args.replays!r} is not a folder")
    opponents = None if args.opponents is None else tuple(n.strip() for n in args.opponents.split(",") if n.strip())
    serve(args.host, args.port, args.opponent, args.replays, opponents, args.time_budget)
    return 0


def _train_rllib(args: argparse.Namespace) -> int:
    try:
        import ray.rllib  # noqa: F401
    except ModuleNotFoundError:
        raise ValueError("train-rllib needs Ray RLlib: pip install 'gostop[rllib]'") from None
    from gostop.train.rllib import train_rllib

    Rules.preset(args.preset, players=args.players)  # a bad preset or player count fails here, not in Ray
    writable_folder(args.out)  # and an unwritable --out, before Ray starts
    out = train_rllib(
        args.out,
        args.iterations,
        env_runners=args.env_runners,
        envs_per_runner=args.envs_per_runner,
        players=args.players,
        preset=args.preset,
        seed=args.seed,
        train_batch_size=args.batch,
        minibatch_size=max(1, args.batch // 8),
        eval_deals=args.eval_deals,
    )
    print(f"saved the RLlib checkpoint in {out / 'checkpoint'} (figures per iteration: {out / 'progress.jsonl'})")
    return 0


def _convert_model(folder: str) -> int:
    from gostop.agents.learned import convert_pickled_model

    out = convert_pickled_model(folder)
    print(f"converted {out}: it now loads from policy.safetensors (policy.pth is no longer read; delete it)")
    return 0


def _exploit(args: argparse.Namespace) -> int:
    import json

    from tqdm import tqdm

    from gostop.train.exploit import exploit, report

    out = Path(args.out or Path("runs") / "exploit" / "".join(c if c.isalnum() else "_" for c in args.agent))
    result = exploit(
        args.agent, out, args.hours, args.players, args.preset, args.deals, args.seed, log=tqdm.write,
        progress=not args.quiet,
    )  # fmt: skip
    (out / "exploit.json").write_text(json.dumps(report(result), indent=2) + "\n")
    print(result.line())
    return 0


def _curve(args: argparse.Namespace) -> int:
    from gostop.train.curves import write_curves

    labels = [] if args.labels is None else [label.strip() for label in args.labels.split(",")]
    for path in write_curves(args.runs, args.against, args.out, labels):
        print(f"wrote {path}")
    return 0


def _remove_run(folder: Path) -> None:
    """Delete an earlier training run (only a folder that looks like one)."""
    from gostop.train.run import LOCK_FILE
    from gostop_env.files import folder_lock

    if folder.exists():
        if not (folder / "config.json").exists():
            raise ValueError(f"{folder} is not a training run folder (no config.json); not deleting it")
        with folder_lock(folder, LOCK_FILE, "training run"):  # never under a run that uses it
            shutil.rmtree(folder)


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _replay(path: str) -> int:
    from gostop_env.replay import Replay, replay_lines

    try:
        lines = replay_lines(Replay.load(path))
    except (OSError, KeyError, TypeError) as error:
        raise ValueError(f"cannot read replay {path}: {error}") from None
    print("\n".join(lines))
    return 0


def _deal(rules: Rules, seed: int) -> int:
    game = ReferenceGame.from_seed(rules, seed)
    rng = np.random.default_rng(seed)
    for seat, hand in enumerate(game.hands):
        print(f"seat {seat} hand: {_names(hand)}")
    print(f"layout: {_names(game.layout)}\n")
    while not game.done:
        seat, action = game.seat, int(rng.choice(game.legal_actions()))
        events = game.step(action)
        taken = sorted(events.captured[seat])
        print(f"seat {seat}: {action_name(action)}" + (f" -> takes {_names(taken)}" if taken else ""))
        happened = [e.name.lower() for e in Event for _ in range(events.count(e))]
        if happened:
            print(f"    events: {', '.join(happened)}")
    print(f"\nresult: {game.result.name.lower()}, scores {game.scores()}, payments {game.payments}")
    return 0


def _names(cards) -> str:
    return ", ".join(card_name(c) for c in sorted(cards)) or "-"


if __name__ == "__main__":
    raise SystemExit(main())
