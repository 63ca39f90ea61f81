"""Hostile bot: tries to read and write what a bot must not reach, then plays like greedy.

Before its first game it tries, and prints one stderr line per attempt (the test reads the
bot's log)::

    readhost: BLOCKED shadow: /etc/shadow: FileNotFoundError
    readhost: LEAK checkout: /work/arena/pyproject.toml: 1873 bytes

then one ``readhost: REPORT {...}`` line holding every attempt as JSON. The attempts:

- read secrets and homes (``/etc/shadow``, ``/root``, ``/home``), the project checkout around
  the interpreter and around its own folder, other bots' source (``bots/greedy``), the
  registry, a tournament's files (``*.toml``, ``arena.sqlite``, ``arena.log``), the other
  bots' logs and working folders, and the opponent's link folder;
- sweep the whole visible file system for anything outside what a bot may see;
- look at the host's processes in ``/proc``, enter ``/proc/1/root``, ptrace pid 1, look for
  descriptors it inherited beyond stdin, stdout and stderr;
- at its first decision (the opponent is running by then), look for the opponent's files in
  ``/tmp`` (``opponent-tmp``: one more line after the report);
- leave its folder through symlinks in it (``hostroot -> /``: a test adds them);
- write to the SDK (``botkit``), its own folder, the interpreter, ``/etc``, ``/usr``, ``/``
  (only when it finds itself sandboxed: in the fallback those writes would land on the host).

More paths come from ``targets.json`` in its folder when a test writes one: ``{"name":
["path", ...]}``, each read (a file) or listed (a folder).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from botkit.bots import GreedyBot
from protocol.client import run

HERE = Path(__file__).resolve().parent
WORKDIR = Path.cwd()
SDK = Path("/arena-sdk")
ENV_KNOWN = {"PATH", "HOME", "TMPDIR", "LANG", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "ARENA_ENDPOINT",
             "ARENA_TOKEN", "ARENA_RUN", "PWD"}  # ARENA_RUN: the run id that marks its processes
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev")
findings: dict[str, dict[str, str]] = {}


def note(attack: str, leaked: bool, detail: str) -> None:
    """Record one attempt (a second attempt under the same name is kept if it leaked)."""
    status = "LEAK" if leaked else "BLOCKED"
    print(f"readhost: {status} {attack}: {detail}", file=sys.stderr, flush=True)
    if attack not in findings or leaked:
        findings[attack] = {"status": status, "detail": detail}


def allowed() -> list[Path]:
    """What the sandbox means to show: its own folder, the interpreter, the SDK, its working
    directory and link folder, and /tmp when it is the sandbox's private one."""
    link = os.environ.get("ARENA_ENDPOINT", "")[len("ipc://"):]
    paths = [HERE, Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent,
             SDK, WORKDIR, *([Path("/tmp")] if SDK.is_dir() else [])]
    return paths + ([Path(link).parent] if link else [])


def on_the_way(path: Path) -> bool:
    """Whether ``path`` is, or leads to, or lies inside something the sandbox means to show."""
    return any(path == a or a in path.parents or path in a.parents for a in allowed())


def try_read(attack: str, path: str | Path) -> None:
    """Read a file, or list a folder: a leak if it shows anything it should not."""
    path = Path(path)
    try:
        if path.is_dir():
            extra = sorted(n for n in os.listdir(path) if not on_the_way(path / n))
            note(attack, bool(extra), f"{path}: lists {extra}" if extra else f"{path}: shows nothing of the host")
        else:
            with open(path, "rb") as fh:
                data = fh.read()
            note(attack, not on_the_way(path), f"{path}: {len(data)} bytes")
    except OSError as exc:
        note(attack, False, f"{path}: {type(exc).__name__}")


def try_write(attack: str, path: Path) -> None:
    try:
        with open(path, "w") as fh:
            fh.write("readhost was here\n")
        note(attack, True, f"{path}: written")
    except OSError as exc:
        note(attack, False, f"{path}: {type(exc).__name__}: {exc.strerror}")


def sweep() -> None:
    """Every file visible outside the system folders and what the bot may see: each is a leak."""
    found: list[str] = []
    deadline = time.monotonic() + 2.0  # the fallback shows the whole host: look, but not for ever
    for top in sorted(os.listdir("/")):
        if f"/{top}" in SYSTEM:
            continue
        for dirpath, dirnames, filenames in os.walk(f"/{top}"):
            if time.monotonic() > deadline:
                break
            here = Path(dirpath)
            dirnames[:] = [d for d in dirnames if not any(here / d == a or a in (here / d).parents
                                                          for a in allowed())]
            found += [str(here / f) for f in filenames if not on_the_way(here / f)]
    note("sweep", bool(found), f"files outside its view: {found[:10]}" if found else "nothing outside its view")


def host_processes() -> None:
    pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    lines = []
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            lines.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:80])
        except OSError:
            continue
    foreign = [c for c in lines if any(w in c for w in ("pytest", "arena", "multiprocessing", "systemd", "init"))
               and "bwrap" not in c and "arena-guard" not in c]
    note("host-proc", len(pids) > 6 or bool(foreign), f"{len(pids)} processes visible, foreign: {foreign}")
    try_read("proc-1-root", "/proc/1/root/etc")
    try_read("proc-1-environ", "/proc/1/environ")


def ptrace_init() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    if libc.ptrace(16, 1, None, None) == 0:  # PTRACE_ATTACH to the sandbox's init
        libc.ptrace(17, 1, None, None)  # PTRACE_DETACH
        note("ptrace", True, "attached to pid 1")
    else:
        note("ptrace", False, f"pid 1: {os.strerror(ctypes.get_errno())}")


def attack() -> None:
    guesses = {HERE.parents[2], Path(sys.prefix).parent}  # bots/hostile/readhost; .venv in the checkout
    try_read("shadow", "/etc/shadow")
    try_read("root-home", "/root")
    try_read("home", "/home")
    for root in sorted(guesses):
        try_read("checkout", root / "pyproject.toml")
        try_read("checkout", root / "arena" / "registry.py")
        try_read("checkout", root)
        try_read("other-bots", root / "bots" / "greedy" / "bot.py")
        try_read("other-bots", root / "bots")
        try_read("tournament-file", root / "examples" / "demo.toml")
    try_read("registry", Path("/root/.local/share/sixty-six-arena/registry"))
    try_read("sys", "/sys/fs/cgroup")
    link = os.environ.get("ARENA_ENDPOINT", "")[len("ipc://"):]
    if link:
        try_read("opponent-link", Path(link).parent.parent)  # only its own link folder is there
    targets = HERE / "targets.json"
    if targets.is_file():
        for name, paths in json.loads(targets.read_text()).items():
            for path in paths:
                try_read(name, path)
    for name in sorted(os.listdir(HERE)):
        if (HERE / name).is_symlink():
            try_read("symlink-escape", HERE / name / "etc" / "shadow")
            try_read("symlink-escape", HERE / name / "root")
    host_processes()
    ptrace_init()
    fds = {int(fd): os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
           if os.path.exists(f"/proc/self/fd/{fd}")}
    extra = {fd: target for fd, target in fds.items() if fd > 2 and not target.startswith("/proc/")}
    note("inherited-fds", bool(extra), f"descriptors beyond stdin/out/err: {extra}")
    env = sorted(set(os.environ) - ENV_KNOWN)
    note("environment", bool(env), f"unexpected variables {env}" if env else "only the arena's variables")
    with open("/proc/self/status") as fh:
        status = {k: v.strip() for k, _, v in (line.partition(":") for line in fh)}
    note("privileges", os.geteuid() == 0 or status.get("CapEff") != "0" * 16,
         f"uid {os.geteuid()}, CapEff {status.get('CapEff')}")
    site = next((Path(p) for p in sys.path if p.endswith("site-packages")), Path(sys.prefix))
    if SDK.is_dir():  # sandboxed; in the fallback these writes would really land on the host
        for name, path in (("write-sdk", SDK / "botkit" / "pwned.py"), ("write-own-folder", HERE / "pwned.txt"),
                           ("write-interpreter", site / "pwned.py"), ("write-etc", Path("/etc/pwned")),
                           ("write-usr", Path("/usr/pwned")), ("write-root", Path("/pwned"))):
            try_write(name, path)
    sweep()
    print("readhost: REPORT " + json.dumps(findings, sort_keys=True), file=sys.stderr, flush=True)


def opponent_files() -> None:
    """Once the match runs, the opponent has started (and diskfill has filled its disk): any
    file in /tmp that is not this bot's would be the opponent's."""
    link = Path(os.environ.get("ARENA_ENDPOINT", "ipc:///nowhere")[len("ipc://"):])
    # Its own folder and its interpreter are mounted at their host paths, which may lie under
    # /tmp when the checkout does (a CI clone there): those are its own, not the opponent's.
    own = {HERE, Path(sys.prefix), Path(sys.base_prefix)}
    others = [str(Path(d) / f) for d, _, files in os.walk("/tmp") for f in files
              if Path(d) / f != link and not own & set((Path(d) / f).parents)]
    note("opponent-tmp", bool(others), f"files in /tmp: {others[:5]}" if others else "/tmp holds nothing of another bot")


class ReadHostBot(GreedyBot):
    """Greedy's play; the attacks ran once before the hello, and once more at its first decision."""

    name = "readhost"
    version = "1.0"
    max_games = 8
    looked = False

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        if not ReadHostBot.looked:
            ReadHostBot.looked = True
            opponent_files()
        return super().act(view, legal_actions)


if __name__ == "__main__":
    attack()
    run(ReadHostBot)
