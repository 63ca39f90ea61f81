"""``arena play-demo``: a seeded match between two in-process random policies."""

from __future__ import annotations

import argparse

from arena.commands.common import add_rules_option, rules_from


def cmd_play_demo(args: argparse.Namespace) -> int:
    """Play one seeded match between two in-process random policies and print it."""
    from arena.demo import play_demo

    print("\n".join(play_demo(args.seed, rules_from(args))))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the subcommand."""
    demo = sub.add_parser("play-demo", help="play one seeded match between two in-process random policies")
    demo.add_argument("--seed", type=int, default=1, help="match seed (default 1)")
    add_rules_option(demo)
    demo.set_defaults(func=cmd_play_demo)
