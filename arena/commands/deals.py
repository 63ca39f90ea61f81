"""``arena reveal``: print a finished tournament's secret deal key (see ``arena.engine.deals``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from arena.errors import ArenaError


class RevealRefused(ArenaError):
    """The key cannot be revealed: public deals, or a tournament still running."""

    code = "reveal"


def cmd_reveal(args: argparse.Namespace) -> int:
    """Print the deal key in hex, alone on its line, once every pair is stored."""
    from arena.engine.deals import DealMode
    from results.store import DB_NAME, Store

    out = Path(args.dir)
    with Store(out / DB_NAME, readonly=True) as store:
        tournament = store.tournament()
        tid = tournament.id
        deals = store.deals(tid)
        pairs_done, pairs_total = len(store.finished_pairs(tid)), len(store.pairs(tid))
    if deals.mode is DealMode.PUBLIC or deals.key is None:
        raise RevealRefused(f"{out}: tournament {tournament.name!r} played public deals (derived from seed "
                            f"{deals.seed}): there is no key to reveal")
    if tournament.finished_at is None:
        raise RevealRefused(f"{out}: tournament {tournament.name!r} is not finished ({pairs_done}/{pairs_total} "
                            f"pairs stored); its deal key is revealed only once every pair is played")
    print(deals.key.hex())
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the subcommand."""
    reveal = sub.add_parser("reveal", help="print a finished tournament's secret deal key (for 'arena verify --key')")
    reveal.add_argument("dir", metavar="DIR")
    reveal.set_defaults(func=cmd_reveal)
