"""The fault table of protocol/PROTOCOL.md section 9 with real bot processes and real sockets.

Each misbehaving bot under ``bots/faulty/`` plays a match against ``bots/random`` through a
``SessionPool`` with millisecond-scale clocks. For each one: exactly the fault of the table is
recorded against the right bot and seat, with its evidence; the strict policy forfeits the
match to the opponent; the same pool then plays a clean match; and no process of the faulty
bot is left once the pool is closed.

Every bot launched here gets a unique marker as an extra (ignored) command-line argument, so
the process scan finds exactly this test's processes (the bot, its sandbox and anything it
forked all carry the bot folder's path and the marker in their command line), even when
another test run uses the same bot folders at the same time.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.botproc.process import GUARD_SCRIPT
from arena.botproc import Limits, Manifest, load_manifest, procfs
from arena.clock import TimeControl
from arena.engine.records import Fault, FaultKind, MatchOutcome
from arena.faults import FaultPolicy
from arena.matchplay import MatchSettings, SessionPool, play_match

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FAULTY = REPO / "bots" / "faulty"
RANDOM = REPO / "bots" / "random"
TIME = TimeControl(time_limit_ms=100, bank_ms=200, handshake_ms=2000)
BUDGET_MS = TIME.time_limit_ms + TIME.bank_ms
GONE_TIMEOUT_S = 10.0

needs_bwrap = pytest.mark.requires("bubblewrap")


# ---------------------------------------------------------------------------- helpers


def tagged(folder: Path) -> tuple[Manifest, str]:
    """The bot's manifest with a unique marker appended to its command, and the marker."""
    marker = f"arena-fault-test-{uuid.uuid4().hex[:12]}"
    manifest = load_manifest(folder)
    return dataclasses.replace(manifest, command=(*manifest.command, marker)), marker


def live_processes(marker: str, folder: Path) -> list[int]:
    """Live processes of one launch: the marker and the bot folder both in the command line."""
    found = []
    for pid in procfs.find_processes(marker):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if str(folder).encode() in cmdline:
            found.append(pid)
    return found


def wait_gone(marker: str, folder: Path, timeout: float = GONE_TIMEOUT_S) -> list[int]:
    """Poll until no process of the launch is left or the deadline passes; what is left."""
    deadline = time.monotonic() + timeout
    while (left := live_processes(marker, folder)) and time.monotonic() < deadline:
        time.sleep(0.01)
    return left


@pytest.fixture
def make_pool(tmp_path: Path) -> Iterator[Callable[..., SessionPool]]:
    """Pools under the test's folder with the test clocks; all closed at the end."""
    pools: list[SessionPool] = []

    def make(**overrides: object) -> SessionPool:
        overrides.setdefault("limits", Limits(log_bytes=4 << 20))  # a short flood: the cap is reached at once
        settings = MatchSettings(time_control=TIME, **overrides)  # type: ignore[arg-type]
        pool = SessionPool(tmp_path / f"run{len(pools)}", settings)
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.close()


def seat_manifests(faulty: Manifest, opponent: Manifest, seat: int) -> tuple[Manifest, Manifest]:
    return (faulty, opponent) if seat == 0 else (opponent, faulty)


def assert_clean(outcome: MatchOutcome) -> None:
    """A match played out with no fault at all."""
    assert outcome.faults == ()
    assert not outcome.forfeit and not outcome.void and outcome.interrupted is None
    assert outcome.winner in (0, 1)
    assert outcome.score[outcome.winner] >= outcome.rules.match_target
    assert outcome.results and len(outcome.records) == len(outcome.results)


# ---------------------------------------------------------------------------- evidence


def decision_timing(fault: Fault, *, first: bool = True) -> None:
    """A fault on a pending request: the request is kept and the clock is recorded."""
    assert fault.request and '"type":"request"' in fault.request and "legal_actions" in fault.request
    assert fault.time_limit_ms == TIME.time_limit_ms
    if first:
        assert fault.bank_ms == TIME.bank_ms  # its first decision: nothing drained yet
    else:
        assert fault.bank_ms is not None and 0 <= fault.bank_ms <= TIME.bank_ms
    assert fault.elapsed_ms is not None and fault.elapsed_ms >= 0


def at_handshake(fault: Fault) -> None:
    """A fault before any request: nothing was asked, so no request and no clock."""
    assert fault.request is None and fault.elapsed_ms is None and fault.bank_ms is None


def timed_out(fault: Fault) -> None:
    decision_timing(fault)
    assert fault.elapsed_ms is not None and fault.elapsed_ms >= BUDGET_MS - 1
    assert "limit plus the bank" in fault.detail


def ev_crash(fault: Fault) -> None:
    decision_timing(fault, first=False)  # it died owing its fourth answer
    assert fault.exit == "exit code 3"
    assert fault.stderr_tail and "exiting with status 3 after 3 decisions" in fault.stderr_tail


def ev_memhog(fault: Fault) -> None:
    decision_timing(fault, first=False)
    assert fault.exit and fault.exit.startswith("exit code 1") and "out of memory" in fault.exit
    assert fault.stderr_tail and "MemoryError" in fault.stderr_tail


def ev_flood(fault: Fault) -> None:
    decision_timing(fault, first=False)
    assert fault.exit and "output cap" in fault.exit
    assert fault.stderr_tail and "flood!" in fault.stderr_tail


def ev_silent(fault: Fault) -> None:
    timed_out(fault)
    assert fault.reply is None and fault.dropped_replies == 0
    assert fault.stderr_tail and "silent: ignoring request seq" in fault.stderr_tail


def ev_slow(fault: Fault) -> None:
    timed_out(fault)
    # The deadline fired first (no reply), or the arena woke a little late and saw the late
    # answer first: then that answer is the evidence, and it came after the limit plus the bank.
    if fault.reply is not None:
        assert fault.elapsed_ms is not None and fault.time_limit_ms is not None and fault.bank_ms is not None
        assert fault.elapsed_ms > fault.time_limit_ms + fault.bank_ms and "after the limit plus the bank" in fault.detail


def ev_slowhello(fault: Fault) -> None:
    at_handshake(fault)
    assert "handshake" in fault.detail
    assert fault.stderr_tail and "sleeping 30 s before the hello" in fault.stderr_tail
    assert fault.exit is None  # it was still asleep when the arena gave up on it


def ev_staleseq(fault: Fault) -> None:
    timed_out(fault)
    assert fault.dropped_replies >= 1
    assert "stray replies dropped" in fault.detail


def ev_notjson(fault: Fault) -> None:
    decision_timing(fault)
    assert fault.reply == "play AH, obviously {not json"
    assert "not JSON" in fault.detail


def ev_badshape(fault: Fault) -> None:
    decision_timing(fault)
    assert fault.reply and '"seq": "' in fault.reply
    assert "'seq'" in fault.detail


def ev_illegal(fault: Fault) -> None:
    assert fault.reply
    action = json.loads(fault.reply)["action"]
    assert action.startswith("play ") and "does not hold" in fault.detail
    assert fault.request and "play" in fault.request  # the legal actions it was offered...
    assert repr(action) not in fault.request  # ...which do not include the one it sent
    assert fault.elapsed_ms is not None and fault.elapsed_ms < BUDGET_MS
    assert fault.time_limit_ms == TIME.time_limit_ms and fault.bank_ms is not None


def ev_oversize(fault: Fault) -> None:
    decision_timing(fault)
    assert "reset" in fault.detail
    assert fault.exit is None  # still running: a reset link, not an exit


def ev_wrongversion(fault: Fault) -> None:
    at_handshake(fault)
    assert fault.reply and '"v": "2.0"' in fault.reply and '"hello"' in fault.reply
    assert "version 2.0" in fault.detail


def ev_outofturn(fault: Fault) -> None:
    decision_timing(fault, first=False)  # the hello came instead of its second answer
    assert fault.reply and '"type": "hello"' in fault.reply
    assert "hello" in fault.detail


@dataclass(frozen=True)
class Case:
    bot: str
    kind: FaultKind
    seat: int
    evidence: Callable[[Fault], None]


# One per row of the fault table (protocol/PROTOCOL.md section 9) (the child spawner has its own test);
# the faulty bot sits in seat 0 or 1 so that both seats are charged somewhere.
CASES = [
    Case("crash", FaultKind.CRASH, 0, ev_crash),
    Case("memhog", FaultKind.CRASH, 1, ev_memhog),
    Case("flood", FaultKind.CRASH, 0, ev_flood),
    Case("silent", FaultKind.TIMEOUT, 1, ev_silent),
    Case("slow", FaultKind.TIMEOUT, 0, ev_slow),
    Case("slowhello", FaultKind.TIMEOUT, 1, ev_slowhello),
    Case("notjson", FaultKind.MALFORMED, 0, ev_notjson),
    Case("badshape", FaultKind.MALFORMED, 1, ev_badshape),
    Case("illegal", FaultKind.ILLEGAL, 0, ev_illegal),
    Case("staleseq", FaultKind.TIMEOUT, 1, ev_staleseq),
    Case("oversize", FaultKind.DISCONNECT, 0, ev_oversize),
    Case("wrongversion", FaultKind.PROTOCOL, 1, ev_wrongversion),
    Case("outofturn", FaultKind.PROTOCOL, 0, ev_outofturn),
]


def test_every_faulty_bot_folder_has_a_case() -> None:
    folders = {p.name for p in FAULTY.iterdir() if (p / "bot.toml").is_file()}
    assert folders == {case.bot for case in CASES} | {"spawner"}
    for folder in folders:
        manifest = load_manifest(FAULTY / folder)
        assert manifest.name == f"faulty-{folder}" and manifest.description


# ---------------------------------------------------------------------------- strict


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.bot)
def test_fault_is_recorded_and_forfeits_under_strict(case: Case, make_pool: Callable[..., SessionPool]) -> None:
    faulty, marker = tagged(FAULTY / case.bot)
    opponent, opponent_marker = tagged(RANDOM)
    pool = make_pool()
    match_id = f"fault-{case.bot}"

    outcome = play_match(pool, seat_manifests(faulty, opponent, case.seat), match_id, seed=17, pair_key="p1")

    assert [f.kind for f in outcome.faults] == [case.kind], [f.describe() for f in outcome.faults]
    fault = outcome.faults[0]
    assert (fault.seat, fault.bot, fault.match_id) == (case.seat, faulty.name, match_id)
    assert fault.charged
    assert fault.hand_index is not None and 0 <= fault.hand_index <= len(outcome.results)
    case.evidence(fault)
    # strict: the opponent wins by forfeit; finished hands stay, the interrupted one does not count
    assert outcome.forfeit and not outcome.void
    assert outcome.winner == 1 - case.seat and outcome.names[outcome.winner] == opponent.name
    assert len(outcome.results) == len(outcome.records) == fault.hand_index

    # the faulty process is gone already (a faulted session is never reused)...
    assert all(s.manifest != faulty for s in pool.idle)
    assert wait_gone(marker, faulty.bot_dir) == []
    # ...and the same pool plays on normally
    after = play_match(pool, (opponent, opponent), f"after-{case.bot}", seed=18, pair_key="p2")
    assert_clean(after)

    pool.close()
    assert wait_gone(marker, faulty.bot_dir) == []
    assert wait_gone(opponent_marker, opponent.bot_dir) == []


# ---------------------------------------------------------------------------- lenient


def test_lenient_illegal_is_recorded_and_the_match_completes(make_pool: Callable[..., SessionPool]) -> None:
    faulty, marker = tagged(FAULTY / "illegal")
    opponent, _ = tagged(RANDOM)
    pool = make_pool(policy=FaultPolicy.LENIENT)

    outcome = play_match(pool, (opponent, faulty), "lenient-illegal", seed=5)

    assert_completed_with_faults(outcome, FaultKind.ILLEGAL, seat=1, bot=faulty.name)
    # the bot cheats on its first decision of every hand it gets to act in: one fault each
    hands = [f.hand_index for f in outcome.faults]
    assert hands == list(range(len(outcome.results)))
    for fault in outcome.faults:
        ev_illegal(fault)
    # lenient does not close the session: it served the whole match
    pool.close()
    assert wait_gone(marker, faulty.bot_dir) == []


def test_lenient_timeout_is_recorded_and_the_match_completes(make_pool: Callable[..., SessionPool]) -> None:
    faulty, marker = tagged(FAULTY / "slow")
    opponent, _ = tagged(RANDOM)
    pool = make_pool(policy=FaultPolicy.LENIENT)

    outcome = play_match(pool, (faulty, opponent), "lenient-slow", seed=6)

    # the bot is slow once per game: one timeout, then the first legal action was played for it
    assert_completed_with_faults(outcome, FaultKind.TIMEOUT, seat=0, bot=faulty.name)
    assert len(outcome.faults) == 1
    ev_slow(outcome.faults[0])
    pool.close()
    assert wait_gone(marker, faulty.bot_dir) == []


def test_lenient_falls_back_to_strict_for_a_dead_bot(make_pool: Callable[..., SessionPool]) -> None:
    faulty, marker = tagged(FAULTY / "crash")
    opponent, _ = tagged(RANDOM)
    pool = make_pool(policy=FaultPolicy.LENIENT)

    outcome = play_match(pool, (opponent, faulty), "lenient-crash", seed=7)

    assert [f.kind for f in outcome.faults] == [FaultKind.CRASH]
    ev_crash(outcome.faults[0])
    assert outcome.forfeit and outcome.winner == 0
    assert_clean(play_match(pool, (opponent, opponent), "lenient-after", seed=8))
    pool.close()
    assert wait_gone(marker, faulty.bot_dir) == []


def assert_completed_with_faults(outcome: MatchOutcome, kind: FaultKind, *, seat: int, bot: str) -> None:
    assert outcome.faults, "the lenient policy must still record the fault"
    assert {(f.kind, f.seat, f.bot) for f in outcome.faults} == {(kind, seat, bot)}
    assert not outcome.forfeit and not outcome.void and outcome.interrupted is None
    assert outcome.winner in (0, 1)
    assert outcome.score[outcome.winner] >= outcome.rules.match_target


# ---------------------------------------------------------------------------- spawner


def sandbox_members(marker: str, folder: Path) -> list[int]:
    """The launch's processes other than the sandbox's own (the bot and what it forked)."""
    members = []
    for pid in live_processes(marker, folder):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if not cmdline.split(b"\0", 1)[0].endswith(b"bwrap") and GUARD_SCRIPT.encode() not in cmdline:
            members.append(pid)
    return members


@needs_bwrap
def test_spawned_child_plays_no_fault_and_dies_with_the_sandbox(make_pool: Callable[..., SessionPool]) -> None:
    spawner, marker = tagged(FAULTY / "spawner")
    opponent, _ = tagged(RANDOM)
    pool = make_pool()

    outcome = play_match(pool, (spawner, opponent), "spawner", seed=9)

    assert_clean(outcome)
    # the session is idle in the pool and its setsid grandchild is alive beside the bot
    # (it was forked before the hello, so it exists by now; the wait is only a deadline)
    deadline = time.monotonic() + GONE_TIMEOUT_S
    while len(members := sandbox_members(marker, spawner.bot_dir)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(members) == 2, members
    sessions = {procfs.read_stat(pid).pgid for pid in members}  # type: ignore[union-attr]
    assert len(sessions) == 2, "the grandchild left the bot's process group (setsid)"

    pool.close()
    assert wait_gone(marker, spawner.bot_dir) == []
