"""Finding the processes a bot left behind: what ``arena validate``'s shutdown step looks at.

A bot's processes are found two ways: the process tree below the process the arena started
(``BotProcess.sandbox_pids``), and the bot's one-time token, which every process it starts
inherits in its environment (``ARENA_TOKEN``) and which finds a double-forked, re-parented
process that the tree no longer shows. A process is *detached* when it is the bot's but not
in the tree of the bot's main process: it was re-parented (double fork, ``setsid``) and would
outlive the bot. Under bubblewrap the sandbox's PID namespace ends it when the bot exits, so
detached processes are looked for before and during the shutdown; in the fallback the
re-parented process would truly survive, and any process still holding the token after the
bot exited is killed here (it is the bot's).
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

from arena.botproc import BotProcess, SandboxMode
from arena.botproc import procfs
from arena.botproc.process import ENV_TOKEN


@dataclass(frozen=True, slots=True)
class Stray:
    """A process of the bot outside its main process tree."""

    pid: int
    command: str

    def describe(self) -> str:
        """``pid 123 (python bot.py)``."""
        return f"pid {self.pid} ({self.command})"


def token_pids(token: str) -> list[int]:
    """Live (non-zombie) processes whose environment holds ``ARENA_TOKEN=<token>``."""
    return procfs.env_processes(ENV_TOKEN, token)


def command_line(pid: int, limit: int = 120) -> str:
    """A process's command line for people ('?' if it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read()
    except OSError:
        return "?"
    text = raw.replace(b"\0", b" ").decode("utf-8", "replace").strip() or "?"
    return text if len(text) <= limit else text[:limit] + "..."


def main_pid(bot: BotProcess) -> int | None:
    """The bot's own main process (see ``BotProcess.main_pid``)."""
    return bot.main_pid()


def helper_pids(bot: BotProcess) -> set[int]:
    """The process the arena started and the sandbox's own (see ``BotProcess.helper_pids``)."""
    return {bot.pid} | bot.helper_pids()


class ShutdownWatch:
    """Watches a bot's processes around its shutdown. Create it before sending ``shutdown``;
    call ``sample()`` while waiting for the bot to exit, then ``settle()`` once it has."""

    def __init__(self, bot: BotProcess, token: str) -> None:
        self.bot = bot
        self.token = token
        self.main = main_pid(bot)
        self.helpers = helper_pids(bot)
        self.strays: dict[int, Stray] = {}
        self.sample()

    def sample(self) -> None:
        """Note the bot's processes outside its main process tree (see ``detached``)."""
        table = procfs.process_table()
        live = {pid for pid, info in table.items() if info.state not in ("Z", "X")}
        members = ({self.bot.pid, *procfs.descendants(self.bot.pid, table)} | set(token_pids(self.token))) & live
        tree = set() if self.main is None else {self.main, *procfs.descendants(self.main, table)}
        for pid in sorted(members - self.helpers - tree):
            self.strays.setdefault(pid, Stray(pid, command_line(pid)))

    def settle(self, timeout: float) -> list[Stray]:
        """After the bot exited: wait up to ``timeout`` s for its other processes to end (the
        sandbox's helpers and whatever the PID namespace takes down with them); note every
        non-helper seen meanwhile, kill what is left and return it (the true survivors)."""
        deadline = time.monotonic() + timeout
        while True:
            left = [pid for pid in token_pids(self.token) if pid != self.main]
            for pid in left:
                if pid not in self.helpers:
                    self.strays.setdefault(pid, Stray(pid, command_line(pid)))
            if not left or time.monotonic() >= deadline:
                break
            time.sleep(0.002)
        survivors = [Stray(pid, command_line(pid)) for pid in left]
        kill_strays(survivors)
        return survivors


def kill_strays(strays: list[Stray]) -> None:
    """SIGKILL the given processes of the bot (already-gone ones are ignored)."""
    for stray in strays:
        try:
            os.kill(stray.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
