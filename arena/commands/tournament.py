"""``arena run``, ``arena resume``, ``arena leaderboard``, ``arena show`` and ``arena verify``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from arena.commands.gcpause import paused_gc

if TYPE_CHECKING:  # for annotations only: this module imports the library inside its functions
    from arena.runner import RunReport
    from arena.tournament import BotEntry, TournamentConfig


def _number(key: str) -> Callable[[str], int]:
    """An argparse type: a whole number within the setting's ``LIMITS`` (argparse names the flag)."""
    def parse(text: str) -> int:
        from arena.tournament import check_number

        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
        try:
            return check_number(key, value)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return parse


def _cluster(text: str) -> str:
    """An argparse type: a Dask scheduler address."""
    from arena.tournament import check_cluster

    try:
        return check_cluster(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _print_leaderboard(out: Path, fmt: str = "table", crosstable: bool = False, rating: str | None = None,
                       **bt: int) -> None:
    """Print the leaderboard of the output folder and write its JSON and CSV exports there."""
    with paused_gc():
        from results.leaderboard import build_leaderboard
        from results.store import DB_NAME, Store

    with Store(out / DB_NAME, readonly=True) as store:
        board = build_leaderboard(store, None, rating=rating, **bt)
        withdrawn = [(e.bot.label, e.withdrawn) for e in store.entrants(store.tournament().id) if e.withdrawn]
    try:
        (out / "leaderboard.json").write_text(board.to_json() + "\n", encoding="utf-8")
        (out / "leaderboard.csv").write_text(board.to_csv(), encoding="utf-8")
    except OSError as exc:  # a full disk, say: the results are stored, and the board is shown all the same
        print(f"warning: could not write the leaderboard's exports in {out}: {exc}", file=sys.stderr)
    if fmt == "json":
        print(board.to_json())
    elif fmt == "csv":
        sys.stdout.write(board.to_csv())
    else:
        print(board.table())
        for label, why in withdrawn:
            print(f"withdrawn: {label} {why}")
        if crosstable:
            print()
            print(board.crosstable_text())


def _config_from_args(args: argparse.Namespace) -> TournamentConfig:
    from arena.botproc import SandboxMode
    from arena.clock import TimeControl
    from arena.faults import FaultPolicy
    from arena.schedule import Format
    from arena.tournament import BotEntry, ConfigError, TournamentConfig, load_config
    from arena.engine.deals import DealMode

    if args.file:
        config = load_config(args.file)
    else:
        if not args.bots or len(args.bots) < 2:
            raise ConfigError("give a tournament file, or at least two bot folders with --bots")
        config = TournamentConfig(bots=tuple(_bot_entry(b) for b in args.bots), name=Path(args.out or "arena-out").name)
    tc = config.time_control
    asked = {"time_limit_ms": args.time_limit_ms, "bank_ms": args.bank_ms, "handshake_ms": args.handshake_ms}
    time_control = TimeControl(**{key: getattr(tc, key) if value is None else value for key, value in asked.items()})
    return config.with_overrides(
        output=Path(args.out).absolute() if args.out else None,
        seed=args.seed,
        deals=DealMode.PUBLIC if args.public_deals else None,
        pairs_per_pairing=args.pairs,
        format=Format(args.format) if args.format else None,
        concurrency=args.concurrency,
        profile=args.profile_override,
        fault_policy=FaultPolicy(args.policy) if args.policy else None,
        sandbox=SandboxMode(args.sandbox) if args.sandbox else None,
        fresh=True if args.fresh else None,
        max_games=args.max_games,
        cluster=args.cluster,
        time_control=time_control,
        allow_unvalidated=True if args.allow_unvalidated else None,
    )


EXIT_INTERRUPTED = 130
EXIT_NO_ROOM = 75  # sysexits' EX_TEMPFAIL: free some space, then resume


def _bot_entry(text: str) -> BotEntry:
    """``--bots`` item: ``DIR``, or ``LABEL=DIR`` (a label is needed when two bots share a name)."""
    from arena.tournament import BotEntry

    label, sep, folder = text.partition("=")
    if sep and label and "/" not in label and not Path(text).exists():
        return BotEntry(Path(folder).absolute(), label)
    return BotEntry(Path(text).absolute())


def _run(config: TournamentConfig, args: argparse.Namespace) -> int:
    with paused_gc():  # the whole runner, before it forks its workers
        from arena.logsetup import setup_logging, stop_forwarding
        from arena.commands.run import run_tournament
        from arena.output import LOG_NAME, hold_output
        from arena.runner import prepare_entrants
        from arena.tournament import ConfigError, unvalidated_entrants
        from results.store import DB_NAME

    if not config.allow_unvalidated:
        missing = unvalidated_entrants(config)
        if missing:
            raise ConfigError(
                "only validated bots may enter a tournament; not validated as they are now: "
                + ", ".join(str(p) for p in missing)
                + ". Run 'arena submit BOT_DIR' (then name it with registry = \"NAME@VERSION\"), "
                "or pass --allow-unvalidated (allow_unvalidated = true in the tournament file)")
    entrants = prepare_entrants(config)  # every check that needs the bots, before the folder is made
    stop = None
    if config.sprt is not None:
        from arena.commands.sprt import SprtStop

        stop = SprtStop(config.sprt, config.pairs_per_pairing)
    with hold_output(config.output, DB_NAME):
        setup_logging(config.output / LOG_NAME, verbose=args.verbose)
        try:
            report = run_tournament(config, progress=False if args.quiet else None, reap_orphans=True,
                                    entrants=entrants, stop_rule=stop)
        finally:
            stop_forwarding()  # the workers are gone
    if report.already_finished:
        _say_finished(config.output)
    else:
        _say_what_was_done(config, report)
    if stop is not None:
        stop.finish(getattr(args, "json", False))
    if report.stopped_for:
        return EXIT_NO_ROOM
    return EXIT_INTERRUPTED if report.interrupted and not report.finished else 0


def _say_what_was_done(config: TournamentConfig, report: RunReport) -> None:
    done = report.pairs_done_before + report.pairs_played
    print(f"{config.name}: {report.pairs_played} pairs played now, {done}/{report.pairs_total} stored, "
          f"{report.faults} faults, {report.seconds:.1f} s; results in {config.output}")
    for label, why in report.withdrawn.items():
        print(f"withdrawn: {label!r} {why}", file=sys.stderr)
    if report.stopped_for:
        print(f"stopped: {report.stopped_for}", file=sys.stderr)
    elif report.interrupted and not report.finished:
        print(f"interrupted: 'arena resume {config.output}' continues where it stopped", file=sys.stderr)
    _print_leaderboard(config.output)


def _say_finished(out: Path) -> bool:
    """If ``out`` holds a finished tournament, say so, print its leaderboard and return True."""
    from results.store import DB_NAME, Store

    with Store(out / DB_NAME, readonly=True) as store:
        row = store.tournament()
        if row.finished_at is None:
            return False
        done, total = len(store.finished_pairs(row.id)), len(store.pairs(row.id))
    print(f"{row.name}: finished already ({done}/{total} pairs stored, finished at {row.finished_at}); "
          f"nothing to do. Results in {out}")
    _print_leaderboard(out)
    return True


def cmd_run(args: argparse.Namespace) -> int:
    """Run a tournament from a file or flags; on an existing output folder, continue it."""
    return _run(_config_from_args(args), args)


def cmd_resume(args: argparse.Namespace) -> int:
    """Continue the tournament stored in DIR with its own settings."""
    from arena.tournament import TournamentConfig
    from results.store import DB_NAME, Store

    out = Path(args.dir).absolute()
    with Store(out / DB_NAME) as store:  # a writer: a store of an older arena is migrated, as its errors say
        config = TournamentConfig.from_dict(store.tournament().settings.document)
    if _say_finished(out):  # nothing changes, and the bots need not be there any more
        return 0
    return _run(config.with_overrides(output=out, concurrency=args.concurrency,
                                      allow_unvalidated=True if args.allow_unvalidated else None), args)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    """Print the leaderboard and write leaderboard.json and leaderboard.csv into DIR."""
    if args.top_k < 1 or args.bootstrap < 1:
        raise ValueError(f"--top-k and --bootstrap must be at least 1, got {args.top_k} and {args.bootstrap}")
    _print_leaderboard(Path(args.dir), args.format, args.crosstable, args.rating, top_k=args.top_k,
                       bootstrap=args.bootstrap, seed=args.bootstrap_seed)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    """Replay a stored match as text."""
    from arena.render import hand_lines
    from results.rows import hand_record
    from results.store import DB_NAME, Store

    with Store(Path(args.dir) / DB_NAME, readonly=True) as store:
        tid = store.tournament().id
        match = store.match_by_id(tid, args.match)
        if match is None:
            ids = [m.match_id for m in store.matches(tid)[:5]]
            print(f"arena: error: no match {args.match!r} in {args.dir} (ids look like {', '.join(ids)})",
                  file=sys.stderr)
            return 2
        labels = [e.bot.label for e in store.entrants(tid)]
        names = (labels[match.seat0], labels[match.seat1])
        hands = store.hands(match.id)
        faults = store.faults(tid, match.id)
    print(f"{match.match_id}: {names[0]} (seat 0) vs {names[1]} (seat 1), seed {match.seed}")
    for row in hands:
        first, *rest = hand_lines(hand_record(row.record_json), names)
        print(f"\nHand {row.hand_index + 1}: {first}")
        print("\n".join(rest))
    for fault in faults:
        print(f"\nFAULT {fault.kind} by {fault.seat if fault.seat is not None else 'arena'}: {fault.detail}")
    if match.void or match.winner_seat is None:
        print("\nvoid match (harness fault), not rated")
    else:
        how = "by forfeit" if match.forfeit else f"{match.score0}-{match.score1}"
        print(f"\n{names[match.winner_seat]} wins {how}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Replay every stored match through the engine (and the deals from the key); exit 1 on any mismatch."""
    from arena.engine.deals import parse_key
    from results.store import DB_NAME, Store
    from results.verify import verify

    out = Path(args.dir)
    key = None if args.key is None else parse_key(args.key)
    with Store(out / DB_NAME, readonly=True) as store:
        report = verify(store, key, published=_published_commitment(out))
    for problem in report.problems:
        print(f"MISMATCH {problem.describe()}")
    print(report.deals)
    print(f"{report.matches} matches and {report.hands} hands re-simulated, {len(report.problems)} mismatches")
    return 1 if report.problems else 0


def _published_commitment(out: Path) -> str | None:
    """The deal commitment in OUT/leaderboard.json, if that export exists and names one."""
    try:
        board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = board.get("deal_commitment") if isinstance(board, dict) else None
    return value if isinstance(value, str) else None


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the subcommands."""
    from results.bt_defaults import DEFAULT_REPLICATES, DEFAULT_SEED, DEFAULT_TOP_K

    run = sub.add_parser("run", help="run a tournament (continues it if the output folder has one)")
    run.add_argument("file", nargs="?", help="tournament file (TOML); docs/tournaments.md lists the keys")
    run.add_argument("--bots", nargs="+", metavar="BOT_DIR",
                     help="bot folders (without a tournament file); LABEL=BOT_DIR labels one")
    run.add_argument("--out", help="output folder (results database, logs, exports)")
    run.add_argument("--seed", type=_number("seed"), help="tournament seed (sets the deals only with --public-deals)")
    run.add_argument("--public-deals", action="store_true",
                     help="derive the deals from the seed: reproducible, but predictable by anyone (development "
                          "only; the default is a secret key per tournament, see 'arena reveal')")
    run.add_argument("--pairs", type=_number("pairs_per_pairing"),
                     help="pairs per pairing (each pair = 2 matches, seats swapped)")
    run.add_argument("--format", choices=["round_robin", "double_round_robin", "gauntlet"])
    run.add_argument("--concurrency", type=_number("concurrency"),
                     help="pairs played at once (default: one per core, half that without control groups)")
    run.add_argument("--profile", dest="profile_override", choices=["default", "pagat", "santase"],
                     help="rules profile")
    run.add_argument("--time-limit-ms", type=_number("time_limit_ms"), help="per-decision limit")
    run.add_argument("--bank-ms", type=_number("bank_ms"), help="match time bank per seat (0: no bank)")
    run.add_argument("--handshake-ms", type=_number("handshake_ms"), help="time to start and say hello")
    run.add_argument("--policy", choices=["strict", "lenient"], help="fault policy")
    run.add_argument("--sandbox", choices=["auto", "bwrap", "fallback"])
    run.add_argument("--fresh", action="store_true", help="new bot processes for every match")
    run.add_argument("--max-games", type=_number("max_games"), metavar="N",
                     help="games one bot process plays at once, at most (default 16; 1 = lock-step)")
    run.add_argument("--cluster", type=_cluster, metavar="tcp://HOST:PORT", help="run pairs on a Dask scheduler")
    run.add_argument("--allow-unvalidated", action="store_true",
                     help="let bots that never passed 'arena validate' enter")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument("-v", "--verbose", action="store_true", help="log INFO lines to the terminal")
    run.set_defaults(func=cmd_run)

    resume = sub.add_parser("resume", help="continue an interrupted tournament")
    resume.add_argument("dir", metavar="DIR")
    resume.add_argument("--concurrency", type=_number("concurrency"))
    resume.add_argument("--allow-unvalidated", action="store_true")
    resume.add_argument("--quiet", action="store_true")
    resume.add_argument("-v", "--verbose", action="store_true")
    resume.add_argument("--json", action="store_true", help="an SPRT run ends with its result as one JSON line")
    resume.set_defaults(func=cmd_resume)

    board = sub.add_parser("leaderboard", help="print the leaderboard; write leaderboard.json/.csv")
    board.add_argument("dir", metavar="DIR")
    board.add_argument("--format", choices=["table", "json", "csv"], default="table")
    board.add_argument("--crosstable", action="store_true", help="also print head-to-head scores and pair statistics")
    board.add_argument("--rating", choices=["bt", "trueskill"],
                       help="what ranks the table: Bradley-Terry Elo or TrueSkill mu - 3 sigma (default: bt once "
                            "the tournament is finished, trueskill while it runs); the exports carry both")
    board.add_argument("--top-k", type=int, default=DEFAULT_TOP_K, help=f"P(top k) for this k ({DEFAULT_TOP_K})")
    board.add_argument("--bootstrap", type=int, default=DEFAULT_REPLICATES,
                       help=f"Bradley-Terry bootstrap replicates ({DEFAULT_REPLICATES})")
    board.add_argument("--bootstrap-seed", type=int, default=DEFAULT_SEED, help=f"their seed ({DEFAULT_SEED})")
    board.set_defaults(func=cmd_leaderboard)

    show = sub.add_parser("show", help="replay a stored match as text")
    show.add_argument("dir", metavar="DIR")
    show.add_argument("match", metavar="MATCH", help="match id, e.g. p00003h1")
    show.set_defaults(func=cmd_show)

    verify = sub.add_parser("verify", help="replay every stored match through the engine and report mismatches")
    verify.add_argument("dir", metavar="DIR")
    verify.add_argument("--key", metavar="HEX", help="the revealed deal key ('arena reveal'): re-derive every deck "
                                                     "from it, after checking it against the commitment")
    verify.set_defaults(func=cmd_verify)

