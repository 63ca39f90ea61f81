"""``arena server``: the competition server (init a data folder, add participants, run it)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena.server.config import Quotas

MIB = 1024 * 1024


def _quota_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--submissions-per-day", type=int, help="uploads per participant per day (default 20)")
    parser.add_argument("--archive-mib", type=float, help="largest archive in MiB (default 5)")
    parser.add_argument("--unpacked-mib", type=float, help="largest unpacked bot folder in MiB (default 20)")
    parser.add_argument("--max-files", type=int, help="most files in a bot folder (default 500)")


def _quotas(args: argparse.Namespace, base: Quotas) -> Quotas:
    from dataclasses import replace

    changes = {"submissions_per_day": args.submissions_per_day, "files": args.max_files,
               "archive_bytes": None if args.archive_mib is None else int(args.archive_mib * MIB),
               "unpacked_bytes": None if args.unpacked_mib is None else int(args.unpacked_mib * MIB)}
    for key, value in changes.items():
        if value is not None and value < 1:
            raise ValueError(f"--{key.replace('_', '-')} must be positive")
    return replace(base, **{k: v for k, v in changes.items() if v is not None})


def cmd_init(args: argparse.Namespace) -> int:
    """Create a data folder; the organiser's token is the last line."""
    from arena.server.config import Quotas, ServerConfig
    from arena.server.setup import init_folder

    config = ServerConfig(
        quotas=_quotas(args, Quotas()),
        profile=args.profile, time_limit_ms=args.time_limit_ms, bank_ms=args.bank_ms,
        handshake_ms=args.handshake_ms, sandbox=args.sandbox, pair_floor=args.pair_floor,
        settle_pairs=args.settle_pairs, rate_per_minute=args.rate_per_minute, rate_burst=args.rate_burst,
    )
    user, token = init_folder(Path(args.dir), config, args.organiser)
    print(f"created the server data folder {args.dir}")
    print(f"organiser account {user.name!r}; its token (shown once, keep it secret):")
    print(token)
    return 0


def cmd_add_user(args: argparse.Namespace) -> int:
    """Add a participant; the token is the last line."""
    from arena.server.db import ServerDB
    from arena.server.setup import add_participant

    db = ServerDB(Path(args.dir))
    try:
        quotas = _quotas(args, db.config().quotas)
    finally:
        db.close()
    user, token = add_participant(Path(args.dir), args.name, quotas)
    print(f"participant {user.name!r} added; their token (shown once, send it privately):")
    print(token)
    return 0


def cmd_reset_token(args: argparse.Namespace) -> int:
    """Replace an account's token; the new one is the last line."""
    from arena.server.db import ServerDB

    db = ServerDB(Path(args.dir))
    try:
        token = db.reset_token(args.name)
    finally:
        db.close()
    print(f"{args.name!r} has a new token (the old one and its web sessions no longer work):")
    print(token)
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    """Serve the competition until interrupted."""
    from arena.server.run import serve

    serve(Path(args.dir), host=args.host, port=args.port, workers=args.workers, cluster=args.cluster)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Create (once) and serve a demo competition."""
    from arena.server.demo import demo_lines
    from arena.server.run import serve

    for line in demo_lines(Path(args.dir), args.port):
        print(line, flush=True)
    serve(Path(args.dir), host="127.0.0.1", port=args.port, workers=args.workers, cluster=None, demo=True)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``arena server`` and its subcommands."""
    server = sub.add_parser("server", help="the competition server: uploads, a live ladder, replays",
                            description="A long-running competition server: participants upload bots over "
                                        "HTTP, the ladder plays them without end, everyone watches live. "
                                        "See docs/server.md.")
    commands = server.add_subparsers(dest="server_command", required=True, metavar="SUBCOMMAND")

    init = commands.add_parser("init", help="create a data folder; prints the organiser token last")
    init.add_argument("dir", metavar="DIR", help="new (or empty) data folder")
    init.add_argument("--organiser", default="organiser", help="the organiser's account name")
    init.add_argument("--profile", default="default", help="rules profile of every match (default: default)")
    init.add_argument("--time-limit-ms", type=int, default=1000, help="per-decision limit (default 1000)")
    init.add_argument("--bank-ms", type=int, default=10_000, help="time bank per match (default 10000)")
    init.add_argument("--handshake-ms", type=int, default=10_000, help="start-up limit (default 10000)")
    init.add_argument("--sandbox", choices=["auto", "bwrap", "fallback"], default="auto", help="bot sandbox")
    init.add_argument("--pair-floor", type=int, default=2, help="pairs every pairing gets before the ladder "
                      "favours uncertain bots (default 2)")
    init.add_argument("--settle-pairs", type=int, default=2, help="pairs per pairing and side in the settle "
                      "phase's double round-robin (default 2)")
    init.add_argument("--rate-per-minute", type=int, default=600, help="requests per client per minute")
    init.add_argument("--rate-burst", type=int, default=120, help="requests a client may send at once")
    _quota_options(init)
    init.set_defaults(func=cmd_init)

    add = commands.add_parser("add-user", help="add a participant; prints their token last")
    add.add_argument("dir", metavar="DIR", help="the data folder")
    add.add_argument("name", metavar="NAME", help="account name (letters, digits, _ and -)")
    _quota_options(add)
    add.set_defaults(func=cmd_add_user)

    reset = commands.add_parser("reset-token", help="replace an account's lost or leaked token; prints it last")
    reset.add_argument("dir", metavar="DIR", help="the data folder")
    reset.add_argument("name", metavar="NAME", help="the account")
    reset.set_defaults(func=cmd_reset_token)

    run = commands.add_parser("run", help="serve the competition (127.0.0.1 unless --host)")
    run.add_argument("dir", metavar="DIR", help="the data folder")
    run.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    run.add_argument("--port", type=int, default=8066, help="port (default 8066)")
    run.add_argument("--workers", type=int, default=None, help="ladder pairs played at once (default: CPUs)")
    run.add_argument("--cluster", metavar="ADDR", help="play ladder pairs on a Dask scheduler (tcp://host:8786)")
    run.set_defaults(func=cmd_run)

    demo = commands.add_parser("demo", help="create and serve a demo competition (alice and bob with the "
                               "random and greedy bots)")
    demo.add_argument("dir", metavar="DIR", help="data folder (created on first use)")
    demo.add_argument("--port", type=int, default=8066, help="port on 127.0.0.1 (default 8066)")
    demo.add_argument("--workers", type=int, default=None, help="ladder pairs played at once (default: CPUs)")
    demo.set_defaults(func=cmd_demo)
