"""The settle phase: a fixed double round-robin among the bots in play when it starts, whose
standings are the official ones.

The organiser starts it (``POST /api/admin/settle``), which freezes submissions. The ladder
thread lets its pairs in flight finish, then plays the phase as an ordinary tournament with
the runner (``run_tournament``) in ``DIR/settle/N``: the same per-pair commits, so a server
killed mid-phase resumes it on restart with nothing lost or counted twice. The bots are fixed
when the phase begins (each one's newest accepted version then). When it is done the ladder
goes on as before (submissions stay frozen until the organiser unfreezes them).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena.botproc import SandboxMode
from arena.clock import TimeControl
from arena.commands.run import run_tournament
from arena.schedule import Format
from arena.server.db import ServerDB, stamp
from arena.tournament import BotEntry, TournamentConfig
from results.leaderboard import build_leaderboard
from results.store import DB_NAME, Store

log = logging.getLogger(__name__)

SETTLE_STATE = "settle"
SETTLE_DIR = "settle"


def settle_folder(folder: Path, number: int) -> Path:
    """Where settle phase ``number`` keeps its tournament."""
    return Path(folder) / SETTLE_DIR / str(number)


def wanted(db: ServerDB) -> bool:
    """Whether a settle phase was started and is not done."""
    state = db.get_state(SETTLE_STATE)
    return state is not None and state.get("status") in ("requested", "running")


def settle_config(folder: Path, db: ServerDB, state: dict[str, Any], workers: int) -> TournamentConfig:
    """The settle phase's tournament."""
    config = db.config()
    return TournamentConfig(
        bots=tuple(BotEntry((Path(folder) / bot["path"]).resolve(), bot["bot"]) for bot in state["bots"]),
        name=f"settle-{state['number']}", format=Format.DOUBLE_ROUND_ROBIN, pairs_per_pairing=state["pairs"],
        seed=state["number"], concurrency=workers, output=settle_folder(folder, state["number"]).resolve(),
        sandbox=SandboxMode(config.sandbox), profile=config.profile,
        time_control=TimeControl(time_limit_ms=config.time_limit_ms, bank_ms=config.bank_ms,
                                 handshake_ms=config.handshake_ms),
        allow_unvalidated=True,  # every entrant passed the server's own validation
    )


def play_settle(folder: Path, db: ServerDB, factory: Callable[[], cf.Executor], workers: int) -> None:
    """Play (or resume) the settle phase that was started; blocks until it is done."""
    state = db.get_state(SETTLE_STATE)
    if state["status"] == "requested":
        state["bots"] = [{"bot": s.bot, "version": s.version, "path": s.bot_path} for s in db.active_versions()]
        state["status"], state["started_at"] = "running", stamp()
        db.set_state(SETTLE_STATE, state)
    log.info("settle phase %d: %d bots, %d pairs per pairing and side", state["number"], len(state["bots"]),
             state["pairs"])
    report = run_tournament(settle_config(folder, db, state, workers), progress=False, executor_factory=factory)
    if report.complete:
        state["status"], state["finished_at"] = "done", stamp()
        db.set_state(SETTLE_STATE, state, actor="server", what=f"settle phase {state['number']} done: "
                     "its standings are official")


def settle_json(db: ServerDB) -> dict[str, Any] | None:
    """The settle phase's state and standings (official once ``status`` is ``done``)."""
    state = db.get_state(SETTLE_STATE)
    if state is None:
        return None
    shown = {k: state.get(k) for k in ("number", "status", "pairs", "started_at", "finished_at")}
    shown["bots"] = [f"{b['bot']}@{b['version']}" for b in state.get("bots", [])]
    path = settle_folder(db.folder, state["number"]) / DB_NAME
    shown["standings"] = None
    if path.exists():
        with Store(path, readonly=True, check_integrity=False) as store:
            if store.has_tournament():
                board = build_leaderboard(store)
                shown["pairs_done"], shown["pairs_total"] = board.pairs_done, board.pairs_total
                shown["standings"] = board.to_dict()["standings"]
    return shown
