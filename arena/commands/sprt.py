"""``arena sprt NEW BASE --out OUT``: duplicate pairs until the GSPRT says whether NEW is better.

The run is a two-bot gauntlet (NEW is the challenger, entrant 0) of at most ``--max-pairs``
pairs with the test as its stopping rule, stored like any tournament: ``arena resume``,
``show``, ``verify`` and ``report`` work on it. See ``results.sprt`` for the statistics.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from arena.engine.records import SprtSettings
from results.pairgames import pair_games
from results.sprt import SprtStatus, SprtTracker
from results.store import Store

DEFAULT_MAX_PAIRS = 1000


class SprtStop:
    """The runner's stopping rule for a test; prints the test's state whenever it moves."""

    def __init__(self, settings: SprtSettings, max_pairs: int) -> None:
        self.tracker = SprtTracker(**asdict(settings), max_pairs=max_pairs)  # ValueError: no test

    def decided(self, store: Store, tid: int) -> bool:
        """Count the newly stored pairs (in schedule order); True once the test has a result."""
        before = self.tracker.status.pairs
        status = self.tracker.update(pair_games(store.matches(tid)))
        if status.pairs != before:
            print(f"sprt: {describe(status)}", file=sys.stderr, flush=True)
        return status.result is not None

    def finish(self, as_json: bool) -> None:
        """The verdict, and with ``as_json`` the final JSON line."""
        status = self.tracker.status
        print(f"sprt: {verdict(status)}; {describe(status)}")
        if as_json:
            print(json.dumps(status.to_dict()))


def describe(status: SprtStatus) -> str:
    """One line: pairs, LLR against its bounds, Elo with its 95% interval, LOS."""
    from results.leaderboard import elo_text

    elo = "n/a"
    if status.score is not None:
        (lo, hi), (score_lo, score_hi) = status.elo_ci95, status.score_ci95
        elo = (f"{elo_text(status.elo, status.score)} [{elo_text(lo, score_lo or 0.0)}, "
               f"{elo_text(hi, score_hi or 0.0)}]")
    los = "n/a" if status.los is None else f"{100 * status.los:.1f}%"
    return (f"{status.pairs} pairs ({status.won} won 2-0, {status.split} split, {status.lost} lost 0-2), "
            f"LLR {status.llr:.2f} ({status.lower:.2f}, {status.upper:.2f}), Elo {elo}, LOS {los}")


def verdict(status: SprtStatus) -> str:
    """What the test concluded, in words."""
    return {"H1": "H1 accepted: NEW is better by at least elo1",
            "H0": "H0 accepted: NEW is not better by elo1 (at most elo0)",
            "max-pairs": "no decision within --max-pairs",
            None: "not decided yet ('arena resume OUT' goes on)"}[status.result]


def cmd_sprt(args: argparse.Namespace) -> int:
    """Run (or continue) a test of NEW against BASE."""
    from arena.botproc import load_manifest
    from arena.commands.tournament import _run
    from arena.schedule import Format
    from arena.tournament import BotEntry, ConfigError, TournamentConfig
    from arena.engine.deals import DealMode

    if args.max_pairs < 1:
        raise ConfigError(f"--max-pairs must be at least 1, got {args.max_pairs}")
    new, base = Path(args.new).absolute(), Path(args.base).absolute()
    name = load_manifest(new).name
    alike = name == load_manifest(base).name  # two entrants may not share a label
    config = TournamentConfig(
        bots=(BotEntry(new, f"{name}-new" if alike else None), BotEntry(base, f"{name}-base" if alike else None)), name=f"sprt-{new.name}-vs-{base.name}", format=Format.GAUNTLET,
        pairs_per_pairing=args.max_pairs, output=Path(args.out).absolute(),
        sprt=SprtSettings(args.elo0, args.elo1, args.alpha, args.beta), allow_unvalidated=args.allow_unvalidated,
    ).with_overrides(seed=args.seed, concurrency=args.concurrency,
                     deals=DealMode.PUBLIC if args.public_deals else None)
    return _run(config, args)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the subcommand."""
    sprt = sub.add_parser("sprt", help="play duplicate pairs of NEW against BASE until the GSPRT decides")
    sprt.add_argument("new", metavar="NEW", help="the new bot's folder")
    sprt.add_argument("base", metavar="BASE", help="the baseline bot's folder")
    sprt.add_argument("--out", required=True, help="output folder (the run is stored like a tournament)")
    sprt.add_argument("--elo0", type=float, default=0.0, help="H0: NEW is this much better, normalised Elo (0)")
    sprt.add_argument("--elo1", type=float, default=5.0, help="H1: NEW is this much better, normalised Elo (5)")
    sprt.add_argument("--alpha", type=float, default=0.05, help="false-H1 rate (0.05)")
    sprt.add_argument("--beta", type=float, default=0.05, help="false-H0 rate (0.05)")
    sprt.add_argument("--max-pairs", type=int, default=DEFAULT_MAX_PAIRS,
                      help=f"stop without a decision after this many pairs ({DEFAULT_MAX_PAIRS})")
    sprt.add_argument("--json", action="store_true", help="end with the result as one JSON line")
    sprt.add_argument("--seed", type=int, help="tournament seed (sets the deals only with --public-deals)")
    sprt.add_argument("--public-deals", action="store_true", help="derive the deals from the seed (development)")
    sprt.add_argument("--concurrency", type=int, help="pairs played at once (default: CPU count)")
    sprt.add_argument("--allow-unvalidated", action="store_true",
                      help="let bots that never passed 'arena validate' enter")
    sprt.add_argument("--quiet", action="store_true", help="no progress bar")
    sprt.add_argument("-v", "--verbose", action="store_true", help="log INFO lines to the terminal")
    sprt.set_defaults(func=cmd_sprt)
