"""``arena validate``: the compliance suite a bot folder must pass before it may enter.

Steps, in order; the first failure stops the suite and the later steps are skipped:

1. ``manifest``: bot.toml is well-formed and speaks protocol 1 (the message names the field).
2. ``files``: the folder is self-contained (no symlink leading out, no special files).
3. ``command``: the program exists and is executable.
4. ``start``: the command starts in the sandbox and stays up until its hello.
5. ``handshake``: a well-formed hello with the right token within the start-up limit.
6. ``version``: the hello speaks protocol 1.x.
7. ``echo``: one request; the reply copies ``seq`` and ``game_id`` and says ``v`` 1.x.
8. ``decisions``: every kind of decision answered legally (lead, follow, pre-draw, final,
   after a meld), each position's hand played to its end.
9. ``edge-states``: closed stock, exhausted stock, marriage on the first lead, trump-nine
   exchange, last trick, false declaration possible.
10. ``max-games``: when the bot claims ``max_games`` > 1, that many games at once (up to
    ``Settings.max_interleaved``), interleaved on one connection.
11. ``shutdown``: after ``shutdown`` the bot exits within the grace period, and no process of
    its outlives it (a detached, re-parented child fails here).
12. ``match``: a match on each seat against the ``random`` bot, with no fault.

Every wait is bounded by the time control (``Settings``); tests use millisecond limits.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import zmq

from arena.botproc import (
    Limits, Manifest, ManifestError, SandboxMode, fingerprint, load_manifest, resolve_mode,
)
from arena.botproc.process import ENV_TOKEN
from arena.botproc.sandbox import REPO_ROOT
from arena.clock import TimeControl
from arena.engine.records import Fault, FaultKind
from arena.faults import FaultPolicy
from arena.matchplay import MatchSettings, SessionPool, play_match
from arena.session import BotSession, greet, launch_session
from arena.validation import leftovers
from arena.validation.folder import command_problem, folder_problems
from arena.validation.positions import DECISION_TYPES, EDGE_STATES, INTERLEAVED_DEALS, Position
from arena.validation.probe import ProbeReferee, Traffic, run_probes
from arena.validation.report import Check, Report, Status, Step, brief
from protocol import PROTOCOL_MAJOR, make_shutdown

log = logging.getLogger(__name__)

DEFAULT_OPPONENT = REPO_ROOT / "bots" / "random"
_SETTLE_S = 0.5  # after a bot exits, how long its sandbox gets to take the rest down

STEPS: tuple[tuple[str, str], ...] = (
    ("manifest", "bot.toml is well-formed"),
    ("files", "the folder is self-contained"),
    ("command", "the command can be executed"),
    ("start", "the command starts"),
    ("handshake", "hello within the start-up limit"),
    ("version", f"protocol version {PROTOCOL_MAJOR}.x"),
    ("echo", "a reply copies seq and game_id"),
    ("decisions", "every decision type answered legally"),
    ("edge-states", "edge states answered legally"),
    ("max-games", "max_games honoured, games interleaved"),
    ("shutdown", "exits on shutdown, leaves no process behind"),
    ("match", "a match on each seat against random, no fault"),
)


@dataclass(frozen=True, slots=True)
class Settings:
    """Limits and opponents of one validation run."""

    time_control: TimeControl = field(default_factory=TimeControl)
    shutdown_ms: int = 2000
    sandbox: SandboxMode | str = SandboxMode.AUTO
    limits: Limits = field(default_factory=Limits)
    opponent: Path = DEFAULT_OPPONENT
    match_seed: str = "validate"
    max_interleaved: int = 4
    run_dir: Path | None = None


class _Run:
    """The state of one validation: the report, and the probe session while it lives."""

    def __init__(self, bot_dir: Path, settings: Settings) -> None:
        self.bot_dir = bot_dir
        self.settings = settings
        self.report = Report(bot_dir=str(bot_dir))
        self.manifest: Manifest | None = None
        self.session: BotSession | None = None
        self.traffic: Traffic | None = None
        self.run_dir = Path(".")
        self.socket_dir = Path(".")
        self.ctx: zmq.Context[Any] | None = None
        self.games = 0

    def game_id(self, label: str) -> str:
        """A fresh game id for a probe game."""
        self.games += 1
        return f"validate-{self.games}-{label}"[:64]


def validate(bot_dir: Path | str, settings: Settings | None = None) -> Report:
    """Run the compliance suite on ``bot_dir``; ``report.passed`` is the verdict.

    Raises only for harness problems (``ArenaError``: e.g. the sandbox cannot be set up, or the
    opponent bot is missing); everything the bot does wrong is a failed step.
    """
    settings = settings or Settings()
    started = time.monotonic()
    run = _Run(Path(bot_dir), settings)
    run.report.sandbox = str(resolve_mode(settings.sandbox))
    steps: list[Callable[[_Run, Step], None]] = [
        _manifest, _files, _command, _start, _handshake, _version, _echo, _decisions,
        _edge_states, _max_games, _shutdown, _match,
    ]
    with _workspace(run):
        failed = False
        for (name, title), func in zip(STEPS, steps):
            step = Step(name, title)
            run.report.steps.append(step)
            if failed:
                step.status, step.detail = Status.SKIP, ""
                continue
            t0 = time.monotonic()
            func(run, step)
            step.elapsed_ms = (time.monotonic() - t0) * 1000.0
            failed = step.failed
    run.report.elapsed_ms = (time.monotonic() - started) * 1000.0
    return run.report


@contextmanager
def _workspace(run: _Run) -> Iterator[None]:
    """Logs folder, socket folder and zmq context for the run; everything closed at the end."""
    given = run.settings.run_dir
    own_run_dir = given is None
    run.run_dir = Path(tempfile.mkdtemp(prefix="arena-validate-")) if given is None else Path(given)
    run.socket_dir = Path(tempfile.mkdtemp(prefix="arena-v-", dir="/tmp"))
    run.ctx = zmq.Context()
    try:
        yield
    finally:
        if run.session is not None:
            run.session.close(polite=False)
        run.ctx.term()
        shutil.rmtree(run.socket_dir, ignore_errors=True)
        if own_run_dir:
            shutil.rmtree(run.run_dir, ignore_errors=True)


# ---------------------------------------------------------------------- static steps


def _manifest(run: _Run, step: Step) -> None:
    try:
        manifest = load_manifest(run.bot_dir)
    except ManifestError as exc:
        step.fail(str(exc))
        return
    if manifest.protocol.split(".")[0] != str(PROTOCOL_MAJOR):
        step.fail(f"{manifest.path}: field 'protocol': this arena speaks protocol {PROTOCOL_MAJOR}, "
                  f"not {manifest.protocol!r}")
        return
    run.manifest = manifest
    run.report.name, run.report.version = manifest.name, manifest.version
    run.report.fingerprint = fingerprint(manifest.bot_dir)
    step.detail = f"{manifest.name} {manifest.version}, max_games {manifest.max_games}"


def _files(run: _Run, step: Step) -> None:
    assert run.manifest is not None
    problems, files, size = folder_problems(run.manifest.bot_dir)
    if problems:
        step.fail("\n".join(problems))
        return
    step.detail = f"{files} files, {size / 1024:.0f} KiB"


def _command(run: _Run, step: Step) -> None:
    assert run.manifest is not None
    problem = command_problem(run.manifest)
    if problem:
        step.fail(problem)
        return
    step.detail = " ".join(run.manifest.argv())


# ---------------------------------------------------------------------- start-up


def _start(run: _Run, step: Step) -> None:
    assert run.manifest is not None and run.ctx is not None
    tc = run.settings.time_control
    run.session = launch_session(
        run.manifest, run.ctx, socket_dir=run.socket_dir, run_dir=run.run_dir,
        handshake_s=tc.handshake_ms / 1000.0, max_games=run.manifest.max_games,
        limits=run.settings.limits, sandbox=run.settings.sandbox, name=run.manifest.name,
    )
    greet([run.session])
    death = run.session.death
    if death is not None and death.kind in (FaultKind.HARNESS, FaultKind.CRASH):
        step.fail(f"{death.kind}: {death.detail}" + (f" ({death.exit})" if death.exit and death.exit not in death.detail else ""),
                  stderr=death.stderr_tail)
        return
    process = run.session.process
    if process is not None and process.view is not None:
        run.report.sandbox_view = process.view.to_dict(hide=(ENV_TOKEN,))
    step.detail = f"pid {process.pid if process else None}"


def _hello_version(death: Fault) -> str | None:
    """The ``v`` of the hello that killed the session, if it was JSON with one."""
    if not death.reply:
        return None
    try:
        msg = orjson.loads(death.reply)
    except orjson.JSONDecodeError:
        return None
    version = msg.get("v") if isinstance(msg, dict) else None
    return version if isinstance(version, str) else None


def _wrong_version(death: Fault | None) -> bool:
    if death is None or death.kind is not FaultKind.PROTOCOL:
        return False
    version = _hello_version(death)
    return version is not None and version.split(".")[0] != str(PROTOCOL_MAJOR)


def _handshake(run: _Run, step: Step) -> None:
    session = run.session
    assert session is not None
    death = session.death
    limit = run.settings.time_control.handshake_ms
    if death is not None and not _wrong_version(death):
        what = {FaultKind.TIMEOUT: f"no hello within the start-up limit of {limit} ms"}.get(death.kind, death.detail)
        step.fail(f"{death.kind}: {what}", received=death.reply or "(nothing)", stderr=death.stderr_tail)
        return
    step.detail = f"within {limit} ms"


def _version(run: _Run, step: Step) -> None:
    session = run.session
    assert session is not None
    death = session.death
    if death is not None:
        step.fail(f"{death.kind}: the hello says protocol version {_hello_version(death)!r}; this arena "
                  f"speaks {PROTOCOL_MAJOR}.x (it answered reject / version_mismatch)",
                  received=death.reply, stderr=death.stderr_tail)
        return
    run.traffic = Traffic(session)
    step.detail = f"granted max_games {session.max_games}"


# ---------------------------------------------------------------------- probe games


def _probe(run: _Run, positions: tuple[Position, ...], *, playout: bool, label: str = "",
           at_once: bool = False) -> list[ProbeReferee]:
    """Play probe games on the probe session: one after another, or all at once."""
    assert run.session is not None and run.manifest is not None
    referees = [
        ProbeReferee(run.game_id(label or p.name), p, bot_name=run.manifest.name,
                     time_control=run.settings.time_control, playout=playout)
        for p in positions
    ]
    batches = [referees] if at_once else [[r] for r in referees]
    for batch in batches:
        if not run.session.alive:
            break
        run_probes(run.session, batch)
        if any(r.problem for r in batch):
            break
    return referees


def _judge(run: _Run, step: Step, referees: list[ProbeReferee], since: int) -> None:
    """Fill ``step`` from the probe games: a check per game, the first problem's evidence."""
    assert run.session is not None and run.traffic is not None
    for referee in referees:
        name = referee.position.name
        if referee.problem is None and referee.done:
            first = referee.answers[0]
            rest = f" (+{len(referee.answers) - 1} more decisions)" if len(referee.answers) > 1 else ""
            step.checks.append(Check(name, True, f"{first.action!r} from {first.legal_actions}{rest}"))
            continue
        if referee.problem is None:
            step.checks.append(Check(name, False, "not played (an earlier game failed)"))
            continue
        fault = referee.problem
        sent, received = run.traffic.last_exchange(referee.match_id, since)
        detail = _fault_text(fault, sent, received)
        step.checks.append(Check(name, False, detail))
        if not step.failed:
            step.fail(f"{name} ({referee.position.about}): {detail}",
                      sent=brief(sent) if sent else fault.request,
                      received="\n".join(_text(r) for r in received) or fault.reply or "(nothing)",
                      stderr=run.session.stderr_tail() or fault.stderr_tail)


def _fault_text(fault: Fault, sent: bytes | None, received: list[bytes]) -> str:
    """A fault in words, naming stray replies and the process's exit when there are any."""
    text = f"{fault.kind}: {fault.detail}"
    if fault.kind is FaultKind.TIMEOUT:
        if fault.elapsed_ms is not None:
            text += f" (waited {fault.elapsed_ms:.0f} ms: limit {fault.time_limit_ms} ms + bank {fault.bank_ms} ms)"
        key = (_json_field(sent, "seq"), _json_field(sent, "game_id")) if sent else None
        strays = [_stray_text(r, key) for r in received]
        if any(strays):
            text += "; " + "; ".join(s for s in strays if s)
    if fault.exit and fault.exit not in text:
        text += f"; process: {fault.exit}"
    return text


def _json_field(raw: bytes | None, key: str) -> Any:
    try:
        msg = orjson.loads(raw or b"")
    except orjson.JSONDecodeError:
        return None
    return msg.get(key) if isinstance(msg, dict) else None


def _stray_text(raw: bytes, key: tuple[Any, Any] | None) -> str:
    """Words for a reply that answered no request (its seq or game_id was not the request's)."""
    seq, game_id = _json_field(raw, "seq"), _json_field(raw, "game_id")
    if _json_field(raw, "type") != "action" or (seq, game_id) == key:
        return ""
    want = f" (the request had seq {key[0]!r}, game_id {key[1]!r})" if key else ""
    return f"the reply echoed seq {seq!r} and game_id {game_id!r}{want}: dropped as answering no request"


def _text(raw: bytes) -> str:
    return raw[:4096].decode("utf-8", errors="replace")


def _echo(run: _Run, step: Step) -> None:
    assert run.traffic is not None
    since = run.traffic.mark()
    referees = _probe(run, DECISION_TYPES[:1], playout=False, label="echo")
    referee = referees[0]
    if referee.answers:  # the conductor only accepts a reply whose seq and game_id match
        step.detail = f"seq and game_id copied; answered {referee.answers[0].action!r}"
        step.checks.append(Check("echo", True, step.detail))
        return
    _judge(run, step, referees, since)


def _decisions(run: _Run, step: Step) -> None:
    assert run.traffic is not None
    since = run.traffic.mark()
    _judge(run, step, _probe(run, DECISION_TYPES, playout=True), since)
    if not step.failed:
        step.detail = ", ".join(r.name for r in step.checks)


def _edge_states(run: _Run, step: Step) -> None:
    assert run.traffic is not None
    since = run.traffic.mark()
    _judge(run, step, _probe(run, EDGE_STATES, playout=True), since)
    if not step.failed:
        step.detail = ", ".join(r.name for r in step.checks)


def _max_games(run: _Run, step: Step) -> None:
    assert run.session is not None and run.manifest is not None and run.traffic is not None
    granted = run.session.max_games
    claimed = run.manifest.max_games
    if granted <= 1:
        step.detail = "max_games 1: nothing to interleave"
        if claimed > 1:
            step.detail = f"bot.toml claims max_games {claimed} but the hello asks for 1: the arena uses 1"
        return
    count = min(granted, run.settings.max_interleaved, len(INTERLEAVED_DEALS))
    since = run.traffic.mark()
    referees = _probe(run, INTERLEAVED_DEALS[:count], playout=True, at_once=True)
    _judge(run, step, referees, since)
    if not step.failed:
        decisions = sum(len(r.answers) for r in referees)
        step.detail = f"{count} games at once (granted {granted}), {decisions} decisions"
        if _max_outstanding(run.traffic.log[since:]) < 2:
            step.fail(f"the {count} games never had two requests outstanding together")


def _max_outstanding(log: list[tuple[str, bytes]]) -> int:
    """The most requests that were waiting for an answer at once in ``log``."""
    waiting: set[Any] = set()
    most = 0
    for direction, raw in log:
        try:
            msg = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if not isinstance(msg, dict):
            continue
        if direction == "sent" and msg.get("type") == "request":
            waiting.add(msg.get("seq"))
            most = max(most, len(waiting))
        elif direction == "received" and msg.get("type") == "action":
            waiting.discard(msg.get("seq"))
    return most


# ---------------------------------------------------------------------- shutdown


def _shutdown(run: _Run, step: Step) -> None:
    session = run.session
    assert session is not None and session.process is not None
    bot = session.process
    if not session.alive:
        step.fail(f"the bot is no longer running ({session.exit_description()})", stderr=session.stderr_tail())
        return
    watch = leftovers.ShutdownWatch(bot, session.token)
    payload = make_shutdown("validation: shutdown check")
    session.send(payload)
    bot.thaw()  # an idle bot is frozen
    sent_at = time.monotonic()
    deadline = sent_at + run.settings.shutdown_ms / 1000.0
    while bot.poll() is None and time.monotonic() < deadline:
        watch.sample()
        bot.wait(0.002)
    exited = bot.poll() is not None
    exit_ms = (time.monotonic() - sent_at) * 1000.0
    left = watch.settle(_SETTLE_S) if exited else []
    strays = watch.strays
    stderr = session.stderr_tail()
    description = bot.exit_description() if exited else "still running"
    session.close(polite=False)
    run.session = None
    if not exited:
        step.fail(f"still running {run.settings.shutdown_ms} ms after shutdown (then killed)",
                  sent=payload, stderr=stderr)
        return
    if left:
        names = ", ".join(s.describe() for s in left)
        step.fail(f"a process of the bot outlived its shutdown: {names} was still running after the bot "
                  f"exited (killed now); a bot must stop every process it starts", sent=payload, stderr=stderr)
        return
    if strays:
        names = ", ".join(s.describe() for s in strays.values())
        step.fail(f"a process of the bot would outlive its shutdown: {names} had detached itself from the "
                  f"bot (double fork / setsid: re-parented out of the bot's process tree) and was still "
                  f"running at shutdown; the sandbox killed it when the bot exited, but a bot must stop "
                  f"every process it starts", sent=payload, stderr=stderr)
        return
    step.detail = f"exited in {exit_ms:.0f} ms ({description}), nothing left behind"


# ---------------------------------------------------------------------- match


def _match(run: _Run, step: Step) -> None:
    assert run.manifest is not None
    opponent = load_manifest(run.settings.opponent)
    settings = MatchSettings(time_control=run.settings.time_control, policy=FaultPolicy.STRICT,
                             sandbox=SandboxMode(run.settings.sandbox), limits=run.settings.limits,
                             fresh=False, max_games=1)  # both matches on the same two processes
    details = []
    with SessionPool(run.run_dir, settings) as pool:
        for seat in (0, 1):
            pair = (run.manifest, opponent) if seat == 0 else (opponent, run.manifest)
            names = (run.manifest.name, f"{opponent.name} (opponent)")
            if seat == 1:
                names = (names[1], names[0])
            outcome = play_match(pool, pair, f"validate-match-seat{seat}", run.settings.match_seed, names=names)
            if outcome.faults or outcome.void:
                fault = outcome.faults[0] if outcome.faults else None
                whose = "the bot" if fault is None or fault.seat == seat else "the opponent (harness problem)"
                text = fault.describe() if fault else "void match"
                step.fail(f"match with the bot on seat {seat}: {text} [{whose}]",
                          sent=brief(fault.request) if fault and fault.request else None,
                          received=fault.reply if fault else None, stderr=fault.stderr_tail if fault else None)
                return
            won = "won" if outcome.winner == seat else "lost"
            details.append(f"seat {seat}: {won} {outcome.score[seat]}-{outcome.score[1 - seat]} "
                           f"in {len(outcome.results)} hands")
    step.detail = "; ".join(details)
