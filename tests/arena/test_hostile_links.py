"""Links that only their bot can touch: the link attacks of ``bots/hostile/`` in real matches.

Each hostile bot here plays ``bench/bots/echo``'s moves (the first legal action) while it
attacks a link: the opponent's (``linkpeek``, ``fdreuse``) or its own (``strayframes``,
``replayflood``, ``monitorflood``, ``fdflood``). So a match against it must be exactly the match against echo
with the same seed, with no fault for anyone, unless the attack is a fault of the attacker
itself (a connection flood before its hello). Clocks are tight (50 ms + 250 ms bank), where
these attacks used to charge the opponent. Each test also checks that the attack really ran
(the bot's own counts on stderr, the arena's counts on the session), so it cannot pass by
the attack missing its target.

``linkpeek`` and ``fdreuse`` play without bubblewrap (``sandbox = fallback``): there every bot's endpoint is
reachable, so the defence is shown not to rest on the endpoint being hidden. For the same
reason control groups are off in the match tests: a bot is frozen while it owes no answer,
which already stops most of these attacks during the opponent's turns; the link must hold
without that. The tournaments run with the whole defence (see ``WHOLE_DEFENCE``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.botproc import Manifest, SandboxMode, cgroups, load_manifest
from arena.clock import TimeControl
from arena.engine.records import FaultKind, MatchOutcome
from arena.matchplay import MatchSettings, MatchSpec, SessionPool, play_at_once, play_match
from arena.session import MAX_OWN_CONNECTIONS, BotSession

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "bots" / "hostile"
ECHO = ROOT / "bench" / "bots" / "echo"
RANDOM = ROOT / "bots" / "random"
TIME = TimeControl(time_limit_ms=50, bank_ms=250, handshake_ms=20_000)  # a loaded machine starts bots slowly
# The runs without attackers only fix what the seeds decide (echo and random answer at once, and
# never look at the clock), so they get clocks no load can break.
CALM = TimeControl(time_limit_ms=1000, bank_ms=10_000, handshake_ms=20_000)
SEEDS = (3, 11)
EVIDENCE_TIMEOUT_S = 20.0


LINKS_ALONE = {**os.environ, cgroups.ENV_SWITCH: "off"}  # for the arena processes the tests start


@pytest.fixture(autouse=True, scope="module")
def links_alone() -> Iterator[None]:
    """Control groups off in this process too (see the module's docstring)."""
    patch = pytest.MonkeyPatch()
    patch.setenv(cgroups.ENV_SWITCH, "off")
    cgroups._detected.cache_clear()
    yield
    patch.undo()
    cgroups._detected.cache_clear()


def played(outcome: MatchOutcome) -> dict[str, Any]:
    """What a match decided (no names, no timings)."""
    return {"winner": outcome.winner, "score": outcome.score, "forfeit": outcome.forfeit, "void": outcome.void,
            "faults": [f.to_dict() for f in outcome.faults], "records": outcome.records,
            "results": [r.to_dict() for r in outcome.results]}


def hostile(name: str, **env: str) -> Manifest:
    manifest = load_manifest(HOSTILE / name)
    return dataclasses.replace(manifest, env={**manifest.env, **env}) if env else manifest


class RecordingPool(SessionPool):
    """A session pool that remembers every session it handed out (closed ones too)."""

    def __init__(self, run_dir: Path, settings: MatchSettings) -> None:
        super().__init__(run_dir, settings)
        self.handed_out: list[BotSession] = []

    def take(self, manifest: Manifest, pair_key: Any = None, *,
             exclude: tuple[BotSession, ...] = ()) -> BotSession:
        session = super().take(manifest, pair_key, exclude=exclude)
        if session not in self.handed_out:
            self.handed_out.append(session)
        return session

    def sessions_of(self, manifest: Manifest) -> list[BotSession]:
        return [s for s in self.handed_out if s.manifest == manifest]


@pytest.fixture
def make_pool(tmp_path: Path) -> Iterator[Callable[..., RecordingPool]]:
    pools: list[RecordingPool] = []

    def make(sandbox: SandboxMode = SandboxMode.AUTO) -> RecordingPool:
        pool = RecordingPool(tmp_path / f"run{len(pools)}", MatchSettings(time_control=TIME, sandbox=sandbox))
        pools.append(pool)
        return pool

    yield make
    for pool in pools:
        pool.close()


def wait_for_stderr(sessions: list[BotSession], pattern: str) -> re.Match[str]:
    """The last stderr line of ``sessions``' bots matching ``pattern`` once written (deadline-bound)."""
    deadline = time.monotonic() + EVIDENCE_TIMEOUT_S
    while time.monotonic() < deadline:
        for session in sessions:
            assert session.process is not None
            found = list(re.finditer(pattern, session.process.stderr_path.read_text(errors="replace")))
            if found:
                return found[-1]
        time.sleep(0.02)  # polling a log with a deadline
    raise AssertionError(f"{sessions[0].name} never wrote {pattern!r}")


def play_both_seats(pool: SessionPool, bot: Manifest, opponent: Manifest) -> list[MatchOutcome]:
    """One match per seed and seat; a new pair key each, so the processes are reused across seeds."""
    outcomes = []
    for seed in SEEDS:
        for seat in (0, 1):
            seats = (bot, opponent) if seat == 0 else (opponent, bot)
            outcomes.append(play_match(pool, seats, f"m{seed}s{seat}", seed, pair_key=(seed, seat)))
    return outcomes


@pytest.fixture(scope="module")
def echo_outcomes(tmp_path_factory: pytest.TempPathFactory) -> list[MatchOutcome]:
    """The same matches with bench/bots/echo in the hostile's seat."""
    settings = MatchSettings(time_control=CALM)
    with SessionPool(tmp_path_factory.mktemp("echo"), settings) as pool:
        return play_both_seats(pool, load_manifest(ECHO), load_manifest(RANDOM))


def assert_as_echo(outcomes: list[MatchOutcome], echo: list[MatchOutcome], *, may_charge: str | None = None) -> None:
    """Each match equals echo's; ``may_charge`` names an attacker whose attack may cost its own
    clock (its threads compete with its main thread): then only it may be charged, and the
    matches without a fault (at least one) equal echo's."""
    faults = [f for o in outcomes for f in o.faults]
    assert {f.bot for f in faults} <= ({may_charge} if may_charge else set()), [f.describe() for f in faults]
    clean = [(played(o), played(e)) for o, e in zip(outcomes, echo) if not o.faults]
    assert clean and all(mine == theirs for mine, theirs in clean)
    assert may_charge or len(clean) == len(outcomes)


# ----------------------------------------------------------------------- in matches


def test_linkpeek_cannot_touch_the_opponents_link(make_pool: Callable[..., RecordingPool],
                                                  echo_outcomes: list[MatchOutcome]) -> None:
    pool = make_pool(SandboxMode.FALLBACK)
    bot, opponent = hostile("linkpeek"), load_manifest(RANDOM)
    # A match's new processes start together, so linkpeek's scan could begin only after a new
    # opponent's hello removed its endpoint: one warm-up match first keeps a linkpeek process
    # running (and scanning) whenever an opponent process starts below.
    warm_up = play_match(pool, (bot, load_manifest(ECHO)), "warm-up", 1, pair_key="warm-up")
    assert warm_up.faults == () and len(pool.sessions_of(bot)) == 1
    assert_as_echo(play_both_seats(pool, bot, opponent), echo_outcomes)
    victims = pool.sessions_of(opponent)
    # Whether the arena saw one of its connections before the opponent's hello is a race (the
    # socket file goes once the hello is in), so the evidence that it reached an endpoint and
    # was refused there comes from its own counts below; the victim kept its one link.
    assert all(s.own_connections == 1 for s in victims)
    seen = wait_for_stderr(pool.sessions_of(bot), r"linkpeek: targets (\d+) connected (\d+) refused ([1-9]\d*)")
    assert int(seen[1]) >= 1 and int(seen[2]) >= 1


def test_fdreuse_cannot_get_a_new_opponent_charged(make_pool: Callable[..., RecordingPool],
                                                   echo_outcomes: list[MatchOutcome]) -> None:
    """Each match's opponent is a new process, flooded with connections before its hello (the
    arena once counted its link once per stale event naming its descriptor, and charged it)."""
    pool = make_pool(SandboxMode.FALLBACK)
    bot = hostile("fdreuse")
    # the warm-up keeps an fdreuse process running (and scanning) whenever an opponent starts below
    warm_up = play_match(pool, (bot, load_manifest(ECHO)), "warm-up", 1, pair_key="warm-up")
    assert warm_up.faults == () and len(pool.sessions_of(bot)) == 1
    outcomes, victims = [], []
    for n, (seed, seat) in enumerate((seed, seat) for seed in SEEDS for seat in (0, 1)):  # play_both_seats' order
        victim = dataclasses.replace(load_manifest(RANDOM), env={"FRESH_PROCESS": str(n)})  # no session to reuse
        seats = (bot, victim) if seat == 0 else (victim, bot)
        outcomes.append(play_match(pool, seats, f"m{seed}s{seat}", seed, pair_key=(seed, seat)))
        victims += pool.sessions_of(victim)
    assert_as_echo(outcomes, echo_outcomes)
    assert len(victims) == len(outcomes) and all(s.own_connections == 1 for s in victims)
    # A connection can only have been made before its target's hello (the path goes then). The
    # attack reaches the new opponents that it finds before they say hello: most, not always all
    # (a Python bot's hello comes within about 75 ms of its start).
    seen = wait_for_stderr(pool.sessions_of(bot), r"fdreuse: targets (\d+) connected (\d+) refused (\d+)")
    assert int(seen[1]) >= 1 and int(seen[2]) >= 1


def test_strayframes_floods_only_its_own_queue(make_pool: Callable[..., RecordingPool],
                                               echo_outcomes: list[MatchOutcome]) -> None:
    pool = make_pool()
    bot = hostile("strayframes")
    assert_as_echo(play_both_seats(pool, bot, load_manifest(RANDOM)), echo_outcomes, may_charge="strayframes")
    flooders = pool.sessions_of(bot)
    assert sum(s.foreign_frames for s in flooders) >= 1 and all(s.dropped_replies == 0 for s in flooders)
    assert all(1 < s.own_connections <= MAX_OWN_CONNECTIONS for s in flooders)  # its link and strays, no more
    assert int(wait_for_stderr(flooders, r"strayframes: sent (\d+)")[1]) > 0


def test_replayflood_pays_for_its_stale_replies_alone(make_pool: Callable[..., RecordingPool]) -> None:
    """Its own backlog (thousands of stale replies queued ahead of each answer) may cost it
    its own clock; the opponent is never charged, whatever the seat."""
    pool = make_pool()
    bot = hostile("replayflood")
    outcomes = play_both_seats(pool, bot, load_manifest(RANDOM))
    faults = [f for o in outcomes for f in o.faults]
    assert {(f.kind, f.bot) for f in faults} <= {(FaultKind.TIMEOUT, "replayflood")}
    for outcome in outcomes:
        for fault in outcome.faults:
            assert fault.seat is not None and outcome.names[fault.seat] == "replayflood"
            assert outcome.winner == 1 - fault.seat
    assert sum(s.dropped_replies for s in pool.sessions_of(bot)) > 0
    assert all(s.foreign_frames == 0 for s in pool.handed_out)


def test_presend_answers_to_requests_not_yet_sent_are_never_taken(make_pool: Callable[..., RecordingPool]) -> None:
    """A guessed reply to the next ``seq``, read while that request is still queued, is dropped
    as never issued: no clock that never started is charged (a fault's elapsed time is a real
    one), and only the attacker can be charged at all (a guess it made that arrived after its
    request was sent is its own answer)."""
    pool = make_pool()
    bot = hostile("presend")
    outcomes = play_both_seats(pool, bot, load_manifest(RANDOM))
    for outcome in outcomes:
        for fault in outcome.faults:
            assert fault.seat is not None and outcome.names[fault.seat] == "presend", fault
            assert fault.elapsed_ms is None or fault.elapsed_ms < 60_000, f"a clock that never ran: {fault}"
    assert int(wait_for_stderr(pool.sessions_of(bot), r"presend: sent (\d+)")[1]) > 0
    assert all(s.foreign_frames == 0 for s in pool.handed_out)


@pytest.mark.parametrize("name, evidence", [
    ("monitorflood", r"monitorflood: connected (0) refused (20000)"),
    ("fdflood", r"fdflood: child connected (0) refused (240)"),
])
def test_connection_floods_after_the_hello_are_refused(name: str, evidence: str,
                                                       make_pool: Callable[..., RecordingPool],
                                                       echo_outcomes: list[MatchOutcome]) -> None:
    pool = make_pool()
    bot = hostile(name)
    outcomes = play_both_seats(pool, bot, load_manifest(RANDOM))
    assert_as_echo(outcomes, echo_outcomes, may_charge=name)
    # what monitorflood held before its hello (12 connections, closed during the match) is not its link
    assert {f.kind for o in outcomes for f in o.faults} <= {FaultKind.TIMEOUT}
    flooders = pool.sessions_of(bot)
    assert all(s.own_connections <= MAX_OWN_CONNECTIONS for s in flooders)
    wait_for_stderr(flooders, evidence)


@pytest.mark.parametrize("name", ["monitorflood", "fdflood"])
@pytest.mark.parametrize("seat", [0, 1])
def test_a_connection_flood_before_the_hello_is_a_fault_of_the_flooder(
        name: str, seat: int, make_pool: Callable[..., RecordingPool]) -> None:
    pool = make_pool()
    bot, opponent = hostile(name, HOSTILE_PHASE="before"), load_manifest(RANDOM)
    outcome = play_match(pool, (bot, opponent) if seat == 0 else (opponent, bot), "flood-first", 5)
    assert [(f.kind, f.seat, f.bot) for f in outcome.faults] == [(FaultKind.PROTOCOL, seat, name)]
    assert "connections to its endpoint before its hello" in outcome.faults[0].detail
    assert outcome.forfeit and outcome.winner == 1 - seat
    assert [s.manifest for s in pool.idle] == [opponent]  # the opponent's session lives on
    clean = play_match(pool, (opponent, load_manifest(ECHO)), "after", 5, pair_key="after")
    assert clean.faults == ()


# ----------------------------------------------------------------------- a late hello


def cup_with(bot: Manifest) -> list[MatchSpec]:
    """Ten matches against random, ``bot`` in the seventh (seat 0), echo in the others: the
    seventh is seated while others are in play, and three more come after it."""
    echo, opponent = load_manifest(ECHO), load_manifest(RANDOM)
    return [MatchSpec((bot if i == 6 else echo, opponent), f"cup{i}", 100 + i, pair_key=i) for i in range(10)]


def test_a_late_hello_costs_no_other_match_its_clock(tmp_path: Path) -> None:
    """latehello holds its hello back while the matches beside its own have requests out (at
    50 ms a move): they play on, with nobody charged, exactly as with echo in its place. It is
    released only once the last match is seated, which an arena that waited for its hello
    before seating anything more would never do (it then says hello after its delay, and the
    wait has timed the others out)."""
    calm = MatchSettings(time_control=CALM, sandbox=SandboxMode.FALLBACK, max_games=4)
    with SessionPool(tmp_path / "echo", calm) as pool:
        expected = [played(o) for o in play_at_once(pool, cup_with(load_manifest(ECHO)))]
    bot = hostile("latehello", HOSTILE_HELLO_DELAY_S="8")
    with RecordingPool(tmp_path / "late", dataclasses.replace(calm, time_control=TIME)) as pool:
        cup = cup_with(bot)

        def release_when_all_seated(spec: MatchSpec) -> None:
            if spec is cup[-1]:
                for session in pool.sessions_of(bot):
                    assert session.process is not None and session.starting
                    wait_for_stderr([session], "latehello: waiting")  # the signal would kill it before
                    os.kill(session.process.pid, signal.SIGUSR1)

        outcomes = play_at_once(pool, cup, started=release_when_all_seated)
        late = pool.sessions_of(bot)
    assert [f.describe() for o in outcomes for f in o.faults] == []
    assert [played(o) for o in outcomes] == expected
    assert len(late) == 1
    assert wait_for_stderr(late, r"latehello: hello (on signal|after the delay)")[1] == "on signal"


# ----------------------------------------------------------------------- arena match

ARENA = [sys.executable, "-m", "arena.cli"]


def arena_match(bot: Path, clock: TimeControl, *extra: str) -> dict[str, Any]:
    args = [*ARENA, "match", str(bot), str(RANDOM), "--seed", "7", "--json", "--time-limit-ms", str(clock.time_limit_ms),
            "--bank-ms", str(clock.bank_ms), "--handshake-ms", str(clock.handshake_ms), *extra]
    done = subprocess.run(args, capture_output=True, text=True, timeout=90, cwd=ROOT, env=LINKS_ALONE)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout[done.stdout.index("{"):])
    return {k: result[k] for k in ("winner", "score", "forfeit", "void", "faults", "records")}


OPPONENTS_ATTACKERS = {"linkpeek", "fdreuse"}  # they flood nothing of their own


@pytest.mark.parametrize("name, sandbox", [("linkpeek", "fallback"), ("fdreuse", "fallback"), ("strayframes", "auto"),
                                           ("fdflood", "auto"), ("monitorflood", "auto")])
def test_arena_match_against_an_attacker_finishes_like_echo(name: str, sandbox: str) -> None:
    """It never hangs; nobody but a flooder (its own threads against its own main thread) is
    ever charged, and an attacker of the opponent's link, which floods nothing of its own, never."""
    echo = arena_match(ECHO, CALM, "--sandbox", sandbox)
    assert echo["faults"] == [] and echo["records"]
    attacked = arena_match(HOSTILE / name, TIME, "--sandbox", sandbox)
    assert {f["bot"] for f in attacked["faults"]} <= ({name} if name not in OPPONENTS_ATTACKERS else set())
    if not attacked["faults"]:
        assert attacked == echo


# ----------------------------------------------------------------------- tournaments

MATCH_ROWS = ("SELECT pair_index, half, seat0, seat1, winner_seat, score0, score1, forfeit, void, hands "
              "FROM matches ORDER BY pair_index, half")
HAND_ROWS = ("SELECT m.pair_index, m.half, h.hand_index, h.record_json FROM hands h "
             "JOIN matches m ON m.id = h.match_row ORDER BY m.pair_index, m.half, h.hand_index")
CUP = [RANDOM, ECHO, *(HOSTILE / name for name in ("linkpeek", "fdreuse", "strayframes", "monitorflood", "fdflood",
                                                   "replayflood"))]


# The tournaments run with the whole defence, control groups included where the machine has
# them: with them off, a flooder's threads take the CPU from bots in other pairs, which is the
# control groups' job to prevent (docs/fairness.md), not the link's.
WHOLE_DEFENCE = {k: v for k, v in os.environ.items() if k != cgroups.ENV_SWITCH}


def run_cup(tmp_path: Path, name: str, bots: list[Path], concurrency: int, clock: TimeControl = TIME) -> Path:
    out = tmp_path / name
    lines = [f'name = "{name}"', "seed = 5", 'deals = "public"', "pairs_per_pairing = 1",
             f"concurrency = {concurrency}", 'sandbox = "fallback"', "allow_unvalidated = true",
             f'output = "{out}"', "[time_control]", f"time_limit_ms = {clock.time_limit_ms}",
             f"bank_ms = {clock.bank_ms}", f"handshake_ms = {clock.handshake_ms}"]
    for i, bot in enumerate(bots):
        lines += ["[[bots]]", f'path = "{bot}"', f'name = "{bot.name}-{i}"']
    config = tmp_path / f"{name}.toml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = subprocess.run([*ARENA, "run", str(config), "--quiet"], capture_output=True, text=True,
                          timeout=150, cwd=ROOT, env=WHOLE_DEFENCE)
    assert done.returncode == 0, done.stderr
    return out / "arena.sqlite"


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute(sql).fetchall()


def unplayed_by(entrants: set[int], table: list[tuple[Any, ...]],
                seats: dict[tuple[int, int], tuple[int, int]]) -> list[tuple[Any, ...]]:
    """The rows (starting with pair index and half) of the matches no entrant of ``entrants`` played."""
    return [row for row in table if not entrants & set(seats[(row[0], row[1])])]


@pytest.mark.timeout(400)
def test_a_tournament_with_link_attackers_equals_one_without(tmp_path: Path) -> None:
    """Every attacker shares its worker with the other pairs (one worker), then two workers.
    Only attackers may be charged (replayflood's own backlog costs its own clock; a flooding
    bot's threads compete with its own main thread); every match without a charged bot equals
    the tournament in which echo replaces each attacker."""
    attackers = {i for i, bot in enumerate(CUP) if bot.parent == HOSTILE}
    baseline = run_cup(tmp_path, "echoes", [ECHO if i in attackers else bot for i, bot in enumerate(CUP)], 2, CALM)
    seats = {(row[0], row[1]): (row[2], row[3]) for row in rows(baseline, MATCH_ROWS)}
    for concurrency in (1, 2):
        attacked = run_cup(tmp_path, f"attacked{concurrency}", CUP, concurrency)
        charged = {row[0] for row in rows(attacked, "SELECT entrant FROM faults")}
        assert charged <= attackers
        assert len(rows(attacked, MATCH_ROWS)) == len(seats)  # it finished
        for sql in (MATCH_ROWS, HAND_ROWS):
            assert unplayed_by(charged, rows(attacked, sql), seats) == unplayed_by(charged, rows(baseline, sql), seats)
        assert unplayed_by(charged, rows(attacked, MATCH_ROWS), seats)  # random against echo at least


# ----------------------------------------------------------------------- who owns a connection

@pytest.mark.parametrize("mode", [pytest.param(SandboxMode.BWRAP, marks=pytest.mark.requires("bubblewrap")),
                                  SandboxMode.FALLBACK])
def test_a_sandbox_owns_its_bots_processes_and_no_other(mode: SandboxMode, make_pool: Callable[..., RecordingPool]) -> None:
    pool = make_pool(mode)
    mine = pool.acquire(load_manifest(ECHO))
    other = pool.acquire(load_manifest(ECHO), exclude=(mine,))
    assert mine.process is not None and other.process is not None
    bot_pid = mine.process.main_pid()
    assert bot_pid is not None and mine.process.owns(bot_pid) is True
    assert mine.process.owns(os.getpid()) is False
    assert mine.process.owns(other.process.main_pid() or -1) is False
    assert mine.own_connections == 1 and mine.foreign_connections == 0 and mine.link_fd is not None
    for session in (mine, other):
        pool.release(session, faulted=False)
