"""Options shared by several subcommands."""

from __future__ import annotations

import argparse

from arena.engine import PROFILES, Rules


def add_rules_option(parser: argparse.ArgumentParser) -> None:
    """``--profile``: the named rules profile."""
    parser.add_argument("--profile", choices=sorted(PROFILES), default="default", help="rules profile (default: default)")


def rules_from(args: argparse.Namespace) -> Rules:
    """The rules the ``--profile`` option names."""
    return Rules.profile(args.profile)
