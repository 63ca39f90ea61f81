"""The ``arena`` command: thin argument parsing over the library; errors become messages."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from arena.commands.gcpause import paused_gc
from arena.errors import ArenaError
from results.errors import StoreError

Command = Callable[[argparse.Namespace], int]

# Each command and the module under arena/commands that registers it (register(subparsers));
# a module may register several. The package's other modules are what the commands share:
# common.py (options) and run.py (the runner wired to the results store, which the server's
# settle phase uses too). ``arena COMMAND`` imports only COMMAND's module (importing them all
# costs half a second of every run); help and unknown commands import them all, in this order.
COMMANDS: dict[str, str] = {
    "play-demo": "arena.commands.demo",
    "match": "arena.commands.match",
    "validate": "arena.commands.validate",
    "submit": "arena.commands.registry",
    "bots": "arena.commands.registry",
    "new-bot": "arena.commands.newbot",
    "report": "arena.commands.report",
    "serve": "arena.commands.report",
    "run": "arena.commands.tournament",
    "resume": "arena.commands.tournament",
    "leaderboard": "arena.commands.tournament",
    "show": "arena.commands.tournament",
    "verify": "arena.commands.tournament",
    "server": "arena.commands.server",
    "reveal": "arena.commands.deals",
    "sprt": "arena.commands.sprt",
}
COMMAND_MODULES = tuple(dict.fromkeys(COMMANDS.values()))


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of ``command`` alone when it is known, else of every subcommand."""
    parser = argparse.ArgumentParser(prog="arena", description="Sixty-Six Arena: a tournament harness for Sixty-Six bots.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in (COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names: its first word, unless that is an option (``--help``)."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def _one_blas_thread() -> None:
    """Have OpenBLAS (numpy's linear algebra) compute on this thread alone, unless the user says otherwise.

    The rankings' numpy work (``results.bradley_terry``) is on small matrices, which OpenBLAS does
    on one thread anyway; the threads it starts with numpy would only spin, at the import and
    through the bootstrap (a tenth of a CPU second at the end of every ``arena run``), taking CPU
    from the matches still playing on a busy machine. Read by OpenBLAS when numpy is first imported.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``arena`` command; returns the exit status."""
    _one_blas_thread()
    argv = sys.argv[1:] if argv is None else list(argv)
    with paused_gc():  # the parser imports the command's module
        args = build_parser(_command_in(argv)).parse_args(argv)
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
