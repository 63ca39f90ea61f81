"""The ``arena`` command: thin argument parsing over the library; errors become messages."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from arena.errors import ArenaError
from results.errors import StoreError

Command = Callable[[argparse.Namespace], int]

# The command groups: one module each under arena/commands, with register(subparsers). The
# package's other modules are what the commands share: common.py (options) and run.py (the
# runner wired to the results store, which the server's settle phase uses too).
COMMAND_MODULES = (
    "arena.commands.demo",
    "arena.commands.match",
    "arena.commands.validate",
    "arena.commands.registry",
    "arena.commands.newbot",
    "arena.commands.report",
    "arena.commands.tournament",
    "arena.commands.server",
    "arena.commands.deals",
    "arena.commands.sprt",
)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="arena", description="Sixty-Six Arena: a tournament harness for Sixty-Six bots.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
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
    except (ArenaError, StoreError, ValueError, OSError) as exc:
        print(f"arena: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
