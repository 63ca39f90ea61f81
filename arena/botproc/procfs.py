"""Small /proc readers: process tree, RSS, and finding processes by a marker in their cmdline."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ProcInfo:
    """One line of the process table: pid, parent pid, process group and state letter."""

    pid: int
    ppid: int
    pgid: int
    state: str


def read_stat(pid: int) -> ProcInfo | None:
    """``/proc/<pid>/stat`` parsed, or None if the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
    except OSError:
        return None
    # comm may contain spaces and parentheses: split after the last ')'.
    fields = raw[raw.rfind(b")") + 2:].split()
    try:
        return ProcInfo(pid, int(fields[1]), int(fields[2]), fields[0].decode())
    except (IndexError, ValueError):
        return None


def process_table() -> dict[int, ProcInfo]:
    """Every process visible now, by pid."""
    table: dict[int, ProcInfo] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            info = read_stat(int(entry))
            if info is not None:
                table[info.pid] = info
    return table


def descendants(pid: int, table: dict[int, ProcInfo] | None = None) -> list[int]:
    """Pids of every live process below ``pid`` (children, grandchildren, ...)."""
    table = process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info.pid)
    out: list[int] = []
    todo = list(children.get(pid, ()))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, ()))
    return out


def rss_bytes(pid: int) -> int | None:
    """Resident set size of one process in bytes, or None if it is gone (or a zombie)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def find_processes(marker: str) -> list[int]:
    """Pids of live (non-zombie) processes whose command line contains ``marker``."""
    return _live_processes_whose("cmdline", marker.encode())


def start_ticks(pid: int) -> int | None:
    """When the process started (clock ticks since boot; tells a pid's reuse apart), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            raw = fh.read()
        return int(raw[raw.rfind(b")") + 2:].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def env_processes(name: str, value: str) -> list[int]:
    """Pids of live (non-zombie) processes whose environment sets ``name`` to exactly ``value``."""
    return _live_processes_whose("environ", f"\0{name}={value}\0".encode(), prefix=b"\0")


def _live_processes_whose(file: str, needle: bytes, *, prefix: bytes = b"") -> list[int]:
    """Pids of live (non-zombie) processes, this one aside, whose ``/proc/PID/FILE`` contains
    ``needle`` once ``prefix`` is put in front of it."""
    found: list[int] = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/{file}", "rb") as fh:
                content = prefix + fh.read()
        except OSError:
            continue
        if needle in content:
            info = read_stat(int(entry))
            if info is not None and info.state not in ("Z", "X"):
                found.append(int(entry))
    return found
