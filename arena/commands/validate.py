"""``arena validate``: the compliance suite for one bot folder, printed like a test report."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where it is used: the validation suite is heavy (ZeroMQ)
    from arena.validation import Settings


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """The time limits, sandbox and opponent of a validation run (shared with ``submit``)."""
    parser.add_argument("--time-limit-ms", type=int, default=1000, help="per-decision limit (default 1000)")
    parser.add_argument("--bank-ms", type=int, default=10_000, help="time bank per game (default 10000)")
    parser.add_argument("--handshake-ms", type=int, default=10_000, help="start-up limit (default 10000)")
    parser.add_argument("--shutdown-ms", type=int, default=2000,
                        help="how long the bot may take to exit after shutdown (default 2000)")
    parser.add_argument("--sandbox", choices=["auto", "bwrap", "fallback"], default="auto",
                        help="bubblewrap sandbox (auto: use it when it works here)")
    parser.add_argument("--opponent", metavar="BOT_DIR", help="bot folder for the validation match "
                        "(default: the bots/random reference bot)")


def settings_from(args: argparse.Namespace) -> Settings:
    """``arena.validation.Settings`` from the options of ``add_limit_options``."""
    from arena.clock import TimeControl
    from arena.validation import DEFAULT_OPPONENT, Settings

    return Settings(
        time_control=TimeControl(time_limit_ms=args.time_limit_ms, bank_ms=args.bank_ms,
                                 handshake_ms=args.handshake_ms),
        shutdown_ms=args.shutdown_ms, sandbox=args.sandbox,
        opponent=Path(args.opponent) if args.opponent else DEFAULT_OPPONENT,
        run_dir=Path(args.run_dir) if getattr(args, "run_dir", None) else None,
    )


def cmd_validate(args: argparse.Namespace) -> int:
    """Validate one bot folder; exit status 0 only when every step passes."""
    from arena.validation import validate

    report = validate(args.bot_dir, settings_from(args))
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print("\n".join(report.lines()))
    return 0 if report.passed else 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the subcommand."""
    parser = sub.add_parser(
        "validate", help="check that a bot folder speaks the protocol correctly (exit 0 when it does)",
        description="Run the compliance suite on a bot folder: manifest, command, handshake, every "
                    "decision type, edge states, max_games, shutdown and a match against random. "
                    "Exit status 0 only when every step passes, 1 when a step fails.")
    parser.add_argument("bot_dir", metavar="BOT_DIR", help="bot folder with bot.toml")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    add_limit_options(parser)
    parser.add_argument("--run-dir", help="keep the bots' logs in this folder (default: a temporary one)")
    parser.set_defaults(func=cmd_validate)
