"""What the benches share (imported by the bench scripts beside it): the machine's speed and load,
and a command run with the CPU of its whole process tree sampled from /proc."""

from __future__ import annotations

import os
import subprocess
import time
import timeit
from dataclasses import dataclass
from pathlib import Path


def calibration_us() -> float:
    """Best-of-5 microseconds of CPU for ``sum(range(1000))``: how fast this machine is right now.

    The shared VMs here swing by 2-3x; a quiet 2.6 GHz core takes about 9-10 us. Read the
    rates a bench prints against it.
    """
    return min(timeit.repeat("sum(range(1000))", number=2000, repeat=5, timer=time.process_time)) / 2000 * 1e6


def load_average() -> str:
    """The one-minute load average, as /proc/loadavg prints it ("?" where there is none)."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


@dataclass(frozen=True)
class TreeRun:
    """One command run to its end: wall seconds, and CPU seconds of its process tree, of the
    bot processes in it and of the command's own process, sampled from /proc."""

    seconds: float
    cpu_s: float
    bots_s: float
    root_s: float


SAMPLE_S = 0.1
"""How often ``run_sampled`` reads /proc: every 20 ms cost a tenth of two cores, every 100 ms a
fiftieth. The processes that matter (the arena's, the bots') live for the whole run, so a
coarser sample loses at most their last tenth of a second."""


def run_sampled(command: list[str], cwd: Path) -> TreeRun:
    """Run ``command`` (its output discarded) and sample the CPU of every process under it every
    ``SAMPLE_S``. ``RUSAGE_CHILDREN`` would miss much of the bots': each runs in its sandbox's PID
    namespace, whose processes the kernel reaps when the sandbox ends."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL)
    sampler = _Sampler(process.pid)
    cpu: dict[int, tuple[float, bool]] = {}  # pid -> (most CPU seen, is a bot)
    while True:
        for pid, seen in sampler.descendants_cpu().items():
            cpu[pid] = max(cpu.get(pid, seen), seen)
        try:
            process.wait(timeout=SAMPLE_S)
            break
        except subprocess.TimeoutExpired:
            continue
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        raise RuntimeError(f"{command[:4]} exited with status {process.returncode}")
    return TreeRun(seconds, sum(s for s, _ in cpu.values()), sum(s for s, bot in cpu.values() if bot),
                   cpu.get(process.pid, (0.0, False))[0])


class _Sampler:
    """Reads the CPU of ``root`` and every live process under it from /proc. Whether a process
    is a bot (a Python process running a ``bot.py``) is read from its command line once per
    program it runs (an exec changes its name in ``stat``)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.tick = os.sysconf("SC_CLK_TCK")
        self.bots: dict[tuple[int, str], bool] = {}  # (pid, name) -> is a bot

    def descendants_cpu(self) -> dict[int, tuple[float, bool]]:
        """User + system CPU seconds of the root and every live process under it, and whether
        each is a bot."""
        parent: dict[int, int] = {}
        stats: dict[int, tuple[float, bool]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            pid = int(entry)
            try:
                raw = Path(f"/proc/{entry}/stat").read_bytes()
                name, fields = raw[raw.index(b"(") + 1:raw.rindex(b")")], raw[raw.rindex(b")") + 2:].split()
                bot = self._is_bot(pid, name.decode(errors="replace"))
            except (OSError, ValueError):
                continue  # gone meanwhile
            parent[pid] = int(fields[1])
            stats[pid] = ((int(fields[11]) + int(fields[12])) / self.tick, bot)
        under: dict[int, tuple[float, bool]] = {}
        for pid, stat in stats.items():
            ancestor = pid
            while ancestor > 1 and ancestor != self.root:
                ancestor = parent.get(ancestor, 0)
            if ancestor == self.root:
                under[pid] = stat
        return under

    def _is_bot(self, pid: int, name: str) -> bool:
        bot = self.bots.get((pid, name))
        if bot is None:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            bot = self.bots[(pid, name)] = name.startswith("python") and any(a.endswith(b"bot.py") for a in argv)
        return bot
