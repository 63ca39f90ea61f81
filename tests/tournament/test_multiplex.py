"""Multiplexed tournaments: several pairs per worker, interleaved on the bots' processes.

The invariants: a process never serves both halves of a duplicate pair nor both seats of one
match, never plays more games at once than it was granted (a batch longer than that refills
it as matches end), and the stored results equal a lock-step run's pair by pair and hand by hand.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import json
import multiprocessing
import os
import re
from collections import Counter
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena import runner
from arena.botproc import Manifest, SandboxMode, load_manifest
from arena.clock import TimeControl
from arena.engine.records import ChangedBot, FaultKind
from arena.matchplay import MatchSettings, MatchSpec, SessionPool, play_at_once, play_spec
from arena.multiplex import WAVES, batch_size, batches, games_at_once, submit_pairs
from arena.referee import MatchOutcome
from arena.session import BotSession

from .test_e2e import HANDS, MATCHES, ROOT, arena, rows

CALM = TimeControl(time_limit_ms=5000, bank_ms=20_000, handshake_ms=20_000)
ANNOUNCED = {"bots/random": 16, "bots/greedy": 8, "bots/pimc": 1}  # their bot.toml's max_games


@dataclass(frozen=True)
class Task:
    """The part of a runner.PairTask that batching reads."""

    bot_dirs: tuple[str, str]
    settings: MatchSettings
    pair_index: int = 0
    fingerprints: tuple[str, ...] = ()
    alone: bool = False


class RecordingPool(SessionPool):
    """A session pool that notes which session each seat got and its load just after, and for
    each process the requests it owes (sent minus answers read) whenever one goes out and
    whenever it is frozen."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seated: list[tuple[Any, BotSession, int]] = []
        self.owed_at_send: list[int] = []
        self.owed_at_freeze: list[int] = []

    def take(self, manifest: Manifest, pair_key: Any = None, *,
             exclude: tuple[BotSession, ...] = ()) -> BotSession:
        session = super().take(manifest, pair_key, exclude=exclude)
        if not any(s is session for _, s, _ in self.seated):
            self._watch(session)
        self.seated.append((pair_key, session, session.load))
        return session

    def _watch(self, session: BotSession) -> None:
        counts = {"sent": 0, "read": 0}
        send, receive, process = session.send, session.receive, session.process
        assert process is not None
        freeze = process.freeze

        def counting_send(payload: bytes) -> bool:
            if b'"type":"request"' in payload:
                counts["sent"] += 1
                self.owed_at_send.append(counts["sent"] - counts["read"])
            return send(payload)

        def counting_receive(limit: int = 64) -> list[bytes]:
            replies = receive(limit)
            counts["read"] += len(replies)
            return replies

        def noting_freeze() -> None:
            self.owed_at_freeze.append(counts["sent"] - counts["read"])
            freeze()

        session.send, session.receive, process.freeze = counting_send, counting_receive, noting_freeze  # type: ignore[method-assign]


def test_one_process_never_serves_both_halves_of_a_pair_nor_both_seats_and_sleeps_only_when_it_owes_nothing(tmp_path: Path) -> None:
    random_bot, greedy = load_manifest(ROOT / "bots/random"), load_manifest(ROOT / "bots/greedy")
    specs = []
    for pair, (a, b) in enumerate([(random_bot, random_bot), (random_bot, greedy), (greedy, random_bot),
                                   (random_bot, random_bot)]):
        specs += [MatchSpec((a, b), f"p{pair}h0", 100 + pair, pair_key=pair),
                  MatchSpec((b, a), f"p{pair}h1", 100 + pair, pair_key=pair)]
    pool = RecordingPool(tmp_path, MatchSettings(time_control=CALM, max_games=8))
    seats: dict[str, list[tuple[Any, BotSession, int]]] = {}  # match id -> its two seats
    with pool:
        # a match is heard of as soon as both its seats are taken (not in the order given: one
        # may wait for room while a later one is seated)
        outcomes = play_at_once(pool, specs, started=lambda spec: seats.setdefault(spec.match_id, pool.seated[-2:]))
        seated = pool.seated
    assert [o.match_id for o in outcomes] == [s.match_id for s in specs]
    assert all(not o.faults and o.winner is not None for o in outcomes)
    assert len(seated) == 2 * len(specs) and sorted(seats) == sorted(s.match_id for s in specs)
    for (_, first, _), (_, second, _) in seats.values():
        assert first is not second
    for pair in range(4):
        halves = [{id(s) for _, s, _ in seats[f"p{pair}h{half}"]} for half in (0, 1)]
        assert not halves[0] & halves[1], f"pair {pair}: one process served both halves"
    served = Counter(id(session) for _, session, _ in seated)
    assert max(served.values()) >= 3  # matches were interleaved on shared processes
    assert all(load <= session.max_games for _, session, load in seated)
    # A process is frozen only when it owes no answer in any of its games, though it owed several at times.
    assert max(pool.owed_at_send) >= 2 and pool.owed_at_freeze and set(pool.owed_at_freeze) == {0}


class WirePool(SessionPool):
    """A session pool that logs, per process, what goes out on its link: ``("open", game)`` at a
    game's first request and ``("close", game)`` at its match_over, in the order sent; and
    when it is seated (``"take"``) and given back (``"faulted"`` or ``"free"``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.wire: dict[int, list[tuple[str, str]]] = {}
        self.seating: dict[int, list[str]] = {}
        self.seen: list[BotSession] = []

    def release(self, session: BotSession, *, faulted: bool) -> None:
        self.seating[id(session)].append("faulted" if faulted else "free")
        super().release(session, faulted=faulted)

    def take(self, manifest: Manifest, pair_key: Any = None, *,
             exclude: tuple[BotSession, ...] = ()) -> BotSession:
        session = super().take(manifest, pair_key, exclude=exclude)
        self.seating.setdefault(id(session), []).append("take")
        if id(session) not in self.wire:
            self.seen.append(session)
            events = self.wire[id(session)] = []
            opened: set[str] = set()
            send = session.send

            def logging_send(payload: bytes) -> bool:
                message = json.loads(payload)
                if message["type"] == "request" and message["game_id"] not in opened:
                    opened.add(message["game_id"])
                    events.append(("open", message["game_id"]))
                elif message["type"] == "match_over":
                    events.append(("close", message["game_id"]))
                return send(payload)

            session.send = logging_send  # type: ignore[method-assign]
        return session


def _played(outcome: MatchOutcome) -> tuple[Any, ...]:
    return outcome.match_id, outcome.winner, outcome.score, outcome.records


def test_a_batch_larger_than_the_processes_take_refills_them_and_plays_as_lock_step(tmp_path: Path) -> None:
    random_bot = load_manifest(ROOT / "bots/random")
    specs = [MatchSpec((random_bot, random_bot), f"p{pair}h{half}", 300 + pair, pair_key=pair)
             for pair in range(12) for half in (0, 1)]
    with WirePool(tmp_path, MatchSettings(time_control=CALM, max_games=3)) as pool:
        outcomes = play_at_once(pool, specs)
        wire = list(pool.wire.values())
    with SessionPool(tmp_path, MatchSettings(time_control=CALM, max_games=1)) as lock_pool:
        lock_step = [play_spec(lock_pool, spec) for spec in specs]
    assert [_played(o) for o in outcomes] == [_played(o) for o in lock_step]
    assert all(not o.faults for o in outcomes)
    # Four processes (a pair's halves never share one) of three games each took all 24 matches:
    # the next match started as soon as one ended, and none ever played more than three at once.
    assert len(wire) == 4
    refilled = 0  # games that opened on a process while it still played one it had before its last match ended
    for events in wire:
        open_games: set[str] = set()
        held: set[str] = set()
        for event, game in events:
            if event == "open":
                refilled += bool(open_games & held)
                open_games.add(game)
                assert len(open_games) <= 3
            else:
                open_games.discard(game)
                held = set(open_games)
    assert refilled >= 4


def test_a_process_that_forfeits_takes_no_new_game_and_the_refilled_batch_still_plays_as_lock_step(
        tmp_path: Path) -> None:
    # faulty-illegal cheats on its first decision of every hand, so each of its matches is
    # forfeited at the same point however the matches interleave; told to take three at once.
    illegal = dataclasses.replace(load_manifest(ROOT / "bots/faulty/illegal"), max_games=3,
                                  env={"ARENA_MAX_GAMES": "3"})
    random_bot = load_manifest(ROOT / "bots/random")
    specs = [MatchSpec(seats, f"p{pair}h{half}", 500 + pair, pair_key=pair)
             for pair in range(5) for half, seats in enumerate(((illegal, random_bot), (random_bot, illegal)))]
    with WirePool(tmp_path, MatchSettings(time_control=CALM, max_games=3)) as pool:
        outcomes = play_at_once(pool, specs)
        sessions = pool.seen
        # Each cheating process was closed once its last match ended, not left for the pool's close.
        assert not pool.retiring and not any(s.alive for s in sessions if s.manifest == illegal)
        assert all(s.alive for s in sessions if s.manifest == random_bot)
    with SessionPool(tmp_path, MatchSettings(time_control=CALM, max_games=1)) as lock_pool:
        lock_step = [play_spec(lock_pool, spec) for spec in specs]
    assert [_played(o) for o in outcomes] == [_played(o) for o in lock_step]
    for spec, outcome in zip(specs, outcomes):
        cheat = spec.manifests.index(illegal)
        assert outcome.forfeit and outcome.winner == 1 - cheat
        assert [(f.kind, f.seat) for f in outcome.faults] == [(FaultKind.ILLEGAL, cheat)]
    for session in sessions:
        seating = pool.seating[id(session)]
        if session.manifest == illegal:  # it took no match after its first forfeit, though it had room
            assert "take" not in seating[seating.index("faulted"):]
        else:
            assert "faulted" not in seating
    assert sum(s.manifest == random_bot for s in sessions) < len(specs)  # the opponent's processes were reused


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sorted(ANNOUNCED)), st.sampled_from(sorted(ANNOUNCED))),
                max_size=30),
       st.integers(1, 20), st.integers(1, 4), st.booleans())
def test_batches_keep_order_and_never_exceed_what_every_bot_is_granted(bots: list[tuple[str, str]], cap: int,
                                                                       workers: int, fresh: bool) -> None:
    tasks = [Task((str(ROOT / a), str(ROOT / b)), MatchSettings(max_games=cap, fresh=fresh), i)
             for i, (a, b) in enumerate(bots)]
    cut = batches(tasks, workers)
    if fresh:
        cap = 1  # new processes for every match: never two matches on one
    assert [t for batch in cut for t in batch] == tasks
    for batch in cut:
        granted = min(cap, *(ANNOUNCED[Path(d).relative_to(ROOT).as_posix()] for t in batch for d in t.bot_dirs))
        assert granted == min(games_at_once(t) for t in batch)
        assert len(batch) <= min(batch_size(t) for t in batch) == (1 if granted == 1 else WAVES * granted)
        assert len(batch) <= -(-len(tasks) // workers)  # shared among the workers
    if cap == 1:
        assert all(len(batch) == 1 for batch in cut)


def _play_many(tasks: list[Task]) -> list[int]:
    if any(t.pair_index < 0 for t in tasks):
        os._exit(3)  # the worker dies while it plays the batch
    return [10 * t.pair_index for t in tasks]


def _play_one(task: Task) -> int:
    return -task.pair_index


def test_each_pair_of_a_batch_gets_its_own_result_or_the_worker_death() -> None:
    multiplexed = MatchSettings(max_games=4)
    tasks = [Task((str(ROOT / "bots/random"),) * 2, multiplexed, i) for i in (1, 2, 3)]
    alone = Task((str(ROOT / "bots/pimc"), str(ROOT / "bots/random")), multiplexed, 4)
    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = submit_pairs(pool, _play_one, _play_many, [*tasks, alone])
        assert {futures[f].pair_index: f.result(timeout=60) for f in futures} == {1: 10, 2: 20, 3: 30, 4: -4}
    doomed = [Task((str(ROOT / "bots/random"),) * 2, multiplexed, i) for i in (5, -6)]
    with cf.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = submit_pairs(pool, _play_one, _play_many, doomed)
        assert len(futures) == 2
        for future in futures:
            with pytest.raises(BrokenProcessPool):
                future.result(timeout=60)


@pytest.mark.e2e
def test_a_multiplexed_run_stores_what_a_lock_step_run_stores(tmp_path: Path) -> None:
    bots = ["bots/random", "bots/greedy", "random2=bots/random", "bench/bots/echo"]
    outs = {}
    for games in ("1", "8"):
        out = outs[games] = tmp_path / f"max{games}"
        result = arena("run", "--bots", *bots, "--pairs", "2", "--public-deals", "--seed", "11", "--concurrency", "2",
                       "--max-games", games, "--out", str(out), "--quiet", "--allow-unvalidated",
                       "--time-limit-ms", "5000", timeout=300)
        assert result.returncode == 0, result.stderr
    lock, multi = (outs[g] / "arena.sqlite" for g in ("1", "8"))
    assert len(rows(lock, MATCHES)) == 2 * 2 * 6
    assert rows(multi, MATCHES) == rows(lock, MATCHES)
    assert rows(multi, HANDS) == rows(lock, HANDS)
    granted = {g: set(re.findall(r"ready \(pid \d+, max_games (\d+)", (outs[g] / "arena.log").read_text()))
               for g in outs}
    assert granted["1"] == {"1"} and granted["8"] == {"8"}


def test_a_bad_max_games_flag_is_one_clear_line(tmp_path: Path) -> None:
    result = arena("run", "--bots", "bots/random", "bench/bots/echo", "--max-games", "0", "--out",
                   str(tmp_path / "out"), "--quiet", "--allow-unvalidated")
    assert result.returncode == 2 and "argument --max-games: must be a whole number from 1 to" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()


def test_a_batch_checks_each_bot_folder_once_and_refuses_only_the_pairs_of_a_changed_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = MatchSettings(sandbox=SandboxMode.FALLBACK, max_games=16, time_control=CALM)
    random_dir, greedy_dir = str(ROOT / "bots/random"), str(ROOT / "bots/greedy")
    random_print, greedy_print = runner.current_fingerprint(random_dir), runner.current_fingerprint(greedy_dir)
    walked: Counter[str] = Counter()
    real = runner.current_fingerprint

    def counted(bot_dir: str) -> str:
        walked[bot_dir] += 1
        return real(bot_dir)

    def pair(index: int, dirs: tuple[str, str], prints: tuple[str, str]) -> runner.PairTask:
        return runner.PairTask(index, index, dirs, ("a", "b"), settings, str(tmp_path / "run"), prints)

    tasks = [pair(0, (random_dir, greedy_dir), (random_print, "stale")),
             pair(1, (random_dir, random_dir), (random_print, random_print)),
             pair(2, (greedy_dir, random_dir), ("stale", random_print)),
             pair(3, (random_dir, random_dir), (random_print, random_print))]
    monkeypatch.setattr(runner, "current_fingerprint", counted)
    try:
        results = runner.play_pairs(tasks)
    finally:
        runner._session_pool(settings, str(tmp_path / "run")).close()
        runner._local.pool = None
    assert [r.changed for r in results] == [(ChangedBot(1, greedy_print),), (), (ChangedBot(0, greedy_print),), ()]
    assert [len(r.outcomes) for r in results] == [0, 2, 0, 2]
    assert not any(o.faults or o.void for r in results for o in r.outcomes)
    assert walked == {random_dir: 2, greedy_dir: 1}  # before the batch (both) and after it (random's pairs only)
