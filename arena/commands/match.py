"""``arena match``: one match between two bot folders as sandboxed processes (a development command:
its deals are public, from ``--seed``, which the game id names)."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from arena.commands.common import add_rules_option, rules_from


def cmd_match(args: argparse.Namespace) -> int:
    """Play one match between two bot folders as sandboxed processes and print it."""
    from arena.botproc import Limits, SandboxMode, load_manifest
    from arena.clock import TimeControl
    from arena.faults import FaultPolicy
    from arena.matchplay import MatchSettings, SessionPool, play_match
    from arena.render import hand_lines

    manifests = (load_manifest(args.bot_a), load_manifest(args.bot_b))
    settings = MatchSettings(
        rules=rules_from(args),
        time_control=TimeControl(time_limit_ms=args.time_limit_ms, bank_ms=args.bank_ms,
                                 handshake_ms=args.handshake_ms),
        policy=FaultPolicy(args.policy),
        sandbox=SandboxMode(args.sandbox),
        fresh=True,
        limits=Limits(disk_bytes=args.disk_mb << 20),
    )
    run_dir = Path(args.run_dir) if args.run_dir else Path(tempfile.mkdtemp(prefix="arena-match-"))
    with SessionPool(run_dir, settings) as pool:
        outcome = play_match(pool, manifests, f"match-{args.seed}", args.seed)
    if args.json:
        print(json.dumps(outcome.to_dict(), indent=2))
        return 0
    names = outcome.names
    if names[0] == names[1]:
        names = (f"{names[0]}#0", f"{names[1]}#1")
    print(f"{names[0]} (seat 0) vs {names[1]} (seat 1), seed {args.seed} (public deals: the game id names the "
          f"seed, so a bot can predict every card; tournaments deal from a secret key)")
    for i, record in enumerate(outcome.records):
        first, *rest = hand_lines(record, names)
        print(f"\nHand {i + 1}: {first}")
        print("\n".join(rest))
    if outcome.interrupted:
        print(f"\nHand {len(outcome.records) + 1} (interrupted): " + "\n".join(hand_lines(outcome.interrupted, names)))
    for fault in outcome.faults:
        print(f"\nFAULT {fault.describe()}")
        for label, value in (("exit", fault.exit), ("reply", fault.reply), ("stderr", fault.stderr_tail)):
            if value:
                print(f"  {label}: {value.strip()}")
    score = f"{outcome.score[0]}-{outcome.score[1]}"
    winner = outcome.winner
    if outcome.void or winner is None:
        print(f"\nvoid match (harness fault), score {score}")
    else:
        how = "by forfeit" if outcome.forfeit else score
        print(f"\n{names[winner]} (seat {winner}) wins {how}")
    print(f"bot logs: {run_dir}")
    return 0


def _megabytes(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the subcommand."""
    match = sub.add_parser("match", help="play one match between two bot folders as separate processes (public, "
                                         "predictable deals from --seed; for development)")
    match.add_argument("bot_a", metavar="BOT_DIR", help="bot folder with bot.toml (seat 0)")
    match.add_argument("bot_b", metavar="BOT_DIR", help="bot folder with bot.toml (seat 1)")
    match.add_argument("--seed", type=int, default=1, help="match seed (default 1); the deals are public: the "
                                                                  "game id names the seed, so bots can predict them")
    match.add_argument("--json", action="store_true", help="print the outcome as JSON")
    add_rules_option(match)
    match.add_argument("--time-limit-ms", type=int, default=1000, help="per-decision limit (default 1000)")
    match.add_argument("--bank-ms", type=int, default=10_000, help="match time bank per seat (default 10000)")
    match.add_argument("--handshake-ms", type=int, default=10_000, help="start-up limit (default 10000)")
    match.add_argument("--policy", choices=["strict", "lenient"], default="strict", help="fault policy")
    match.add_argument("--sandbox", choices=["auto", "bwrap", "fallback"], default="auto",
                       help="bubblewrap sandbox (auto: use it when it works here)")
    match.add_argument("--disk-mb", type=_megabytes, default=64,
                       help="what each bot may write in all, its /tmp and /dev/shm (default 64)")
    match.add_argument("--run-dir", help="folder for bot logs (default: a new temporary folder)")
    match.set_defaults(func=cmd_match)
