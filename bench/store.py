"""The tournament parent's own CPU: per stored pair, and for the end-of-run leaderboard, A/B against another checkout.

Plays bench/tournament.py's round robin (three random bots, public deals, seed 5, multiplexed)
once, through the runner in this process, keeping every ``PairOutcome`` as the runner hands it
to the results. Then, ``--runs`` times, interleaved (A B A B ...), for each checkout:

- stores every pair through ``results.recording.Recording.record`` (the pair, its rating
  snapshots, one transaction each), into a copy of the run's store emptied of results, and
  prints the median CPU milliseconds per stored pair (``time.process_time``);
- builds the leaderboard of the full store (``results.leaderboard.build_leaderboard``) and
  prints its median CPU milliseconds.

It also says whether the two checkouts stored the same results (every match row, hand record
and rating snapshot read back alike, think times to the microsecond they are rounded to) and
built the same leaderboard JSON. The other checkout's
``results`` package is loaded in this process under another name (``--against DIR``, e.g.
``git worktree add /tmp/base main``); it imports this checkout's ``arena`` (the records it
stores are this run's), so it must be one whose ``results`` reads the same engine records.

    .venv/bin/python bench/store.py [--against DIR] [--pairs 100] [--runs 7]
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from machine import load_average  # bench/machine.py: a script's folder is on its import path

# bench/protocol.py is named like the ``protocol`` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from arena.clock import TimeControl  # noqa: E402
from arena.engine.deals import DealMode  # noqa: E402
from arena.engine.records import Pair, PairOutcome  # noqa: E402
from arena.output import hold_output  # noqa: E402
from arena.runner import play_tournament, prepare_entrants  # noqa: E402
from arena.tournament import BotEntry, TournamentConfig  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULT_TABLES = ("think_times", "faults", "hands", "matches", "rating_snapshots")
Played = tuple[PairOutcome, Pair, int, dict[int, str]]


class Capturing:
    """The runner's results (a ``Recording``), keeping each pair it is handed to store."""

    def __init__(self, recording: Any) -> None:
        self.recording = recording
        self.played: list[Played] = []

    def record(self, pair: PairOutcome, scheduled: Pair, attempts: int, withdraw: Mapping[int, str]) -> None:
        self.played.append((pair, scheduled, attempts, dict(withdraw)))
        self.recording.record(pair, scheduled, attempts, withdraw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.recording, name)


def play(out: Path, pairs: int, recording: type) -> list[Played]:
    """Play the round robin into ``out``; the pairs as the runner stored them."""
    bots = tuple(BotEntry(ROOT / "bots" / "random", f"random{i}") for i in range(3))
    config = TournamentConfig(bots=bots, name="store-bench", pairs_per_pairing=pairs, seed=5, deals=DealMode.PUBLIC,
                              concurrency=2, output=out, max_games=16, allow_unvalidated=True,
                              time_control=TimeControl(time_limit_ms=5000))
    entrants = prepare_entrants(config)
    with hold_output(out, "arena.sqlite"), recording(out / "arena.sqlite") as results:
        capturing = Capturing(results)
        play_tournament(config, capturing, progress=False, entrants=entrants)
    return capturing.played


def emptied(store: Path, template: Path) -> None:
    """``template``: a copy of ``store`` with its schedule and no results."""
    shutil.copy(store, template)
    db = sqlite3.connect(template)
    for table in RESULT_TABLES:
        db.execute(f"DELETE FROM {table}")
    db.execute("UPDATE pairs SET finished_at = NULL, attempts = 0")
    db.execute("UPDATE tournaments SET finished_at = NULL")
    db.commit()
    db.execute("VACUUM")
    db.close()


def results_of(checkout: Path, alias: str) -> ModuleType:
    """``checkout``'s ``results`` package (this one's when it is this checkout)."""
    if checkout == ROOT:
        return importlib.import_module("results")
    folder = checkout / "results"
    spec = importlib.util.spec_from_file_location(alias, folder / "__init__.py", submodule_search_locations=[str(folder)])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[alias] = package
    spec.loader.exec_module(package)
    return package


def store_all(results: ModuleType, template: Path, path: Path, played: list[Played]) -> float:
    """Store every pair into a fresh copy of ``template``; CPU ms per pair."""
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)
    shutil.copy(template, path)
    recording = importlib.import_module(results.__name__ + ".recording")
    with recording.Recording(path) as rec:
        rec.stored()
        rec.rater  # noqa: B018 (a run restores its rater once, before its first pair)
        start = time.process_time()
        for pair, scheduled, attempts, withdraw in played:
            rec.record(pair, scheduled, attempts, withdraw)
        return (time.process_time() - start) / len(played) * 1e3


def leaderboard(results: ModuleType, path: Path) -> tuple[float, str]:
    """The leaderboard of ``path``: CPU ms to build it, and its JSON."""
    store = importlib.import_module(results.__name__ + ".store")
    board = importlib.import_module(results.__name__ + ".leaderboard")
    with store.Store(path, readonly=True) as opened:
        start = time.process_time()
        built = board.build_leaderboard(opened, None)
        return (time.process_time() - start) * 1e3, built.to_json()


def contents(results: ModuleType, path: Path) -> tuple[Any, ...]:
    """What a store holds, as its reads return it (row ids aside); think times apart."""
    store = importlib.import_module(results.__name__ + ".store")
    rows = importlib.import_module(results.__name__ + ".rows")
    with store.Store(path, readonly=True) as opened:
        tid = opened.tournament().id
        matches = [(m.match_id, m.seats, m.winner_seat, m.score0, m.score1, m.hands, m.interrupted_json is None)
                   for m in opened.matches(tid)]
        hands = [(h.hand_index, h.result, rows.hand_record(h.record_json)) for h in opened.all_hands(tid)]
        snapshots = [(s.after_pair, s.entrant, s.mu, s.sigma) for s in opened.snapshots(tid)]
        thinks = sorted((t.match_row, t.seat, t.entrant, t.wall_ms, t.cpu_ms) for t in opened.think_times(tid))
    return (matches, hands, snapshots), thinks


def alike(first: tuple[Any, ...], second: tuple[Any, ...]) -> bool:
    """Two stores' ``contents`` are the same, think times to the microsecond they are rounded to."""
    (exact, thinks), (other_exact, other_thinks) = first, second

    def close(a: tuple[float | None, ...] | None, b: tuple[float | None, ...] | None) -> bool:
        if a is None or b is None:
            return a is b
        return len(a) == len(b) and all(x == y if x is None or y is None else abs(x - y) <= 0.0010001
                                        for x, y in zip(a, b))

    return exact == other_exact and len(thinks) == len(other_thinks) and all(
        t[:3] == u[:3] and close(t[3], u[3]) and close(t[4], u[4]) for t, u in zip(thinks, other_thinks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, help="another checkout to compare with (A; this one is B)")
    parser.add_argument("--pairs", type=int, default=100, help="pairs per pairing (three pairings)")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    checkouts = {"B": ROOT} if args.against is None else {"A": args.against.resolve(), "B": ROOT}
    packages = {name: results_of(path, f"results_{name.lower()}") for name, path in checkouts.items()}
    with tempfile.TemporaryDirectory(prefix="arena-store-bench-") as tmp:
        run = Path(tmp) / "run"
        played = play(run, args.pairs, importlib.import_module("results.recording").Recording)
        template = Path(tmp) / "template.sqlite"
        emptied(run / "arena.sqlite", template)
        per_pair: dict[str, list[float]] = {name: [] for name in checkouts}
        board_ms: dict[str, list[float]] = {name: [] for name in checkouts}
        boards: dict[str, str] = {}
        for _ in range(args.runs):
            for name, results in packages.items():
                per_pair[name].append(store_all(results, template, Path(tmp) / f"{name}.sqlite", played))
                board_ms[name].append(leaderboard(results, run / "arena.sqlite")[0])
        for name, results in packages.items():
            boards[name] = leaderboard(results, Path(tmp) / f"{name}.sqlite")[1]
        same = len({*boards.values()}) == 1
        held = [contents(packages["B"], Path(tmp) / f"{name}.sqlite") for name in checkouts]
        stored_alike = all(alike(held[0], other) for other in held[1:])
    med = statistics.median
    hands = sum(len(o.results) for pair, *_ in played for o in pair.outcomes)
    print(f"{len(played)} pairs ({hands} hands), {args.runs} runs each, load {load_average()}")
    for name, path in checkouts.items():
        print(f"{name} {path}: {med(per_pair[name]):.3f} ms CPU per stored pair (range {min(per_pair[name]):.3f}-"
              f"{max(per_pair[name]):.3f}); leaderboard {med(board_ms[name]):.1f} ms CPU")
    if args.against:
        print(f"B/A: {med(per_pair['B']) / med(per_pair['A']):.2f}x the CPU per stored pair, "
              f"{med(board_ms['B']) / med(board_ms['A']):.2f}x the leaderboard's; stored results "
              f"{'alike' if stored_alike else 'DIFFERENT'}, leaderboards {'the same' if same else 'DIFFERENT'}")


if __name__ == "__main__":
    main()
