"""What the benches share (imported by the bench scripts beside it): the machine's load, and a
command run with the CPU of its whole process tree sampled from /proc."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


def load_average() -> str:
    """The one-minute load average, as /proc/loadavg prints it ("?" where there is none)."""
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


@dataclass(frozen=True)
class TreeRun:
    """One command run to its end: wall seconds, and CPU seconds of its process tree and of the
    bot processes in it, sampled from /proc."""

    seconds: float
    cpu_s: float
    bots_s: float


def run_sampled(command: list[str], cwd: Path) -> TreeRun:
    """Run ``command`` (its output discarded) and sample the CPU of every process under it every
    20 ms. ``RUSAGE_CHILDREN`` would miss much of the bots': each runs in its sandbox's PID
    namespace, whose processes the kernel reaps when the sandbox ends."""
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL)
    cpu: dict[int, tuple[float, bool]] = {}  # pid -> (most CPU seen, is a bot)
    while True:
        for pid, seen in descendants_cpu(process.pid).items():
            cpu[pid] = max(cpu.get(pid, seen), seen)
        try:
            process.wait(timeout=0.02)
            break
        except subprocess.TimeoutExpired:
            continue
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        raise RuntimeError(f"{command[:4]} exited with status {process.returncode}")
    return TreeRun(seconds, sum(s for s, _ in cpu.values()), sum(s for s, bot in cpu.values() if bot))


def descendants_cpu(root: int) -> dict[int, tuple[float, bool]]:
    """User + system CPU seconds of ``root`` and every live process under it, and whether each is
    a bot (a Python process running a ``bot.py``)."""
    tick = os.sysconf("SC_CLK_TCK")
    parent: dict[int, int] = {}
    stats: dict[int, tuple[float, bool]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = Path(f"/proc/{entry}/stat").read_text()
            name, fields = raw[raw.index("(") + 1:raw.rindex(")")], raw[raw.rindex(")") + 2:].split()
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue  # gone meanwhile
        parent[int(entry)] = int(fields[1])
        bot = name.startswith("python") and any(arg.endswith(b"bot.py") for arg in argv)
        stats[int(entry)] = ((int(fields[11]) + int(fields[12])) / tick, bot)
    under: dict[int, tuple[float, bool]] = {}
    for pid, stat in stats.items():
        ancestor = pid
        while ancestor > 1 and ancestor != root:
            ancestor = parent.get(ancestor, 0)
        if ancestor == root:
            under[pid] = stat
    return under
