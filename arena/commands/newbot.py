"""``arena new-bot``: scaffold a bot folder that passes ``arena validate`` as it is."""

from __future__ import annotations

import argparse


def cmd_new_bot(args: argparse.Namespace) -> int:
    """Write the new bot folder and say what to do next."""
    from arena.scaffold import new_bot

    folder = new_bot(args.name, args.dir)
    print(f"created {folder}: bot.toml, bot.py (strategy in act), README.md, test_bot.py")
    print(f"next: edit {folder / 'bot.py'}, then: arena validate {folder}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the subcommand."""
    parser = sub.add_parser("new-bot", help="scaffold a working bot folder (Python, using the SDK)")
    parser.add_argument("name", metavar="NAME", help="the bot's name (letters, digits, - and _)")
    parser.add_argument("--dir", default=".", help="folder to create NAME in (default: the current folder)")
    parser.set_defaults(func=cmd_new_bot)
