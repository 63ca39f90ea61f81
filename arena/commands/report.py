"""``arena report`` (a static HTML site of a tournament) and ``arena serve`` (the same pages, live)."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from types import FrameType

DEFAULT_PORT = 8066


def cmd_report(args: argparse.Namespace) -> int:
    """Write the static report of DIR."""
    from results.report import write_report

    out, files = write_report(Path(args.dir), Path(args.output) if args.output else None)
    print(f"{files} files written to {out}; open {out / 'index.html'}")
    return 0


def _stop(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve DIR's report on 127.0.0.1 until Ctrl-C (or SIGTERM)."""
    from results.errors import StoreError
    from results.report.serve import ReportServer

    folder = Path(args.dir)
    if not folder.is_dir():
        raise StoreError(f"{folder}: no such folder (give a tournament's output folder)")
    server = ReportServer(folder.absolute(), args.port)
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        print(f"serving {folder} at {server.url} (Ctrl-C stops)", flush=True)
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.server_close()
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the subcommands."""
    report = sub.add_parser("report", help="write a static HTML report (leaderboard, crosstable, bots, replays)")
    report.add_argument("dir", metavar="DIR", help="a tournament's output folder")
    report.add_argument("-o", "--output", metavar="OUT", help="where to write the site (default: DIR/report)")
    report.set_defaults(func=cmd_report)

    serve = sub.add_parser("serve", help="serve the report on 127.0.0.1, refreshed while the tournament runs")
    serve.add_argument("dir", metavar="DIR", help="a tournament's output folder (may still be running)")
    serve.add_argument("--port", type=int, default=DEFAULT_PORT,
                       help=f"TCP port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks a free one)")
    serve.set_defaults(func=cmd_serve)
