"""``arena submit`` and ``arena bots``: the registry of validated bots."""

from __future__ import annotations

import argparse
import json

from arena.commands.validate import add_limit_options, settings_from


def cmd_submit(args: argparse.Namespace) -> int:
    """Validate a bot folder and store it in the registry (a no-op when it is unchanged), or
    with ``--server`` upload it to a competition server."""
    if args.server:
        return _submit_remote(args)
    from arena.submission import ValidationFailed, submit

    try:
        done = submit(args.bot_dir, args.registry, settings=settings_from(args))
    except ValidationFailed as exc:
        print("\n".join(exc.report.lines()))
        print(f"arena: not submitted: {exc}")
        return 1
    if done.report is not None and args.verbose:
        print("\n".join(done.report.lines()))
    print(done.message)
    return 0


def _submit_remote(args: argparse.Namespace) -> int:
    """``arena submit --server URL --token T BOT_DIR [--wait]``."""
    import os
    from pathlib import Path

    from arena.server.client import upload, wait_for_verdict

    token = args.token or os.environ.get("ARENA_TOKEN")
    if not token:
        print("arena: not submitted: give --token TOKEN (or set ARENA_TOKEN)")
        return 2
    answer = upload(args.server, token, Path(args.bot_dir))
    if answer.status != 201:
        print(f"arena: not submitted: {answer.body.get('error', answer.status)}")
        return 1
    sid = answer.body["id"]
    print(f"submitted {answer.body['bot']} version {answer.body['version']} as submission {sid} "
          f"({answer.body['status']}); status: {args.server.rstrip('/')}/submissions/{sid}")
    if not args.wait:
        return 0
    verdict = wait_for_verdict(args.server, token, sid)
    status = verdict.body.get("status", verdict.body.get("error"))
    reason = verdict.body.get("reason")
    print(f"submission {sid}: {status}" + (f": {reason}" if reason else ""))
    return 0 if status == "accepted" else 1


def cmd_bots(args: argparse.Namespace) -> int:
    """List the registry's entries."""
    from arena.registry import entries, registry_root

    found = entries(args.registry)
    if args.json:
        print(json.dumps([{"name": e.name, "version": e.version, "spec": e.spec, "fingerprint": e.fingerprint,
                           "validated": e.validated, "submitted_at": e.submitted_at, "bot_dir": str(e.bot_dir)}
                          for e in found], indent=2))
        return 0
    root = registry_root(args.registry)
    if not found:
        print(f"no bots in the registry {root}; add one with: arena submit BOT_DIR")
        return 0
    rows = [("NAME@VERSION", "FINGERPRINT", "VALIDATED", "SUBMITTED")]
    rows += [(e.spec, e.fingerprint[:12], "yes" if e.validated else "no", e.submitted_at) for e in found]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    print(f"{len(found)} bot(s) in {root}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the subcommands."""
    submit = sub.add_parser(
        "submit", help="validate a bot folder and store it in the registry",
        description="Validate a bot folder (as arena validate does) and store a copy of it in the "
                    "registry as name@version with its fingerprint. Resubmitting an unchanged bot does "
                    "nothing; a changed bot needs a new version in bot.toml.")
    submit.add_argument("bot_dir", metavar="BOT_DIR", help="bot folder with bot.toml")
    submit.add_argument("--registry", metavar="DIR",
                        help="registry folder (default: $ARENA_REGISTRY or ~/.local/share/sixty-six-arena/registry)")
    submit.add_argument("-v", "--verbose", action="store_true", help="print the validation report")
    submit.add_argument("--server", metavar="URL", help="upload to this competition server instead (see "
                        "docs/server.md); the server validates the bot")
    submit.add_argument("--token", help="your token for --server (default: $ARENA_TOKEN)")
    submit.add_argument("--wait", action="store_true", help="with --server: wait for the validation's verdict")
    add_limit_options(submit)
    submit.set_defaults(func=cmd_submit)

    bots = sub.add_parser("bots", help="list the bots in the registry")
    bots.add_argument("--registry", metavar="DIR", help="registry folder (default as for submit)")
    bots.add_argument("--json", action="store_true", help="print the entries as JSON")
    bots.set_defaults(func=cmd_bots)
