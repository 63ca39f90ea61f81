"""The ``arena`` command: thin argument parsing over the library; errors become messages."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from arena.engine import PROFILES, Rules

Command = Callable[[argparse.Namespace], int]


def _rules(args: argparse.Namespace) -> Rules:
    return Rules.profile(args.profile)


def cmd_play_demo(args: argparse.Namespace) -> int:
    """Play one seeded match between two in-process random policies and print it."""
    from arena.demo import play_demo

    print("\n".join(play_demo(args.seed, _rules(args))))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="arena", description="Sixty-Six Arena: a tournament harness for Sixty-Six bots.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = sub.add_parser("play-demo", help="play one seeded match between two in-process random policies")
    demo.add_argument("--seed", type=int, default=1, help="match seed (default 1)")
    demo.add_argument("--profile", choices=sorted(PROFILES), default="default", help="rules profile")
    demo.set_defaults(func=cmd_play_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``arena`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Command = args.func
    try:
        return func(args)
    except BrokenPipeError:  # the reader went away (``arena ... | head``)
        sys.stderr.close()
        return 0
    except (ValueError, OSError) as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
