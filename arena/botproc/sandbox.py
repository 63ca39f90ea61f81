"""How a bot is confined (protocol/PROTOCOL.md section 7): resource limits, sandbox modes, clean env.

Pure command building plus a one-time check that bubblewrap works here. What the bot sees
inside bubblewrap (and bwrap's arguments for it) is ``arena.botproc.view``; starting, watching
and stopping processes lives in ``arena.botproc.process``.

The fallback (no bubblewrap) is **not a security boundary**: the bot runs as the arena's user,
sees the whole host and writes wherever that user may; only process groups and rlimits apply.
"""

from __future__ import annotations

import enum
import functools
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import arena
from arena.botproc.cgroups import CgroupLimits
from arena.errors import ArenaError

log = logging.getLogger(__name__)

SANDBOX_WORKDIR = "/tmp/work"
"""The bot's working directory, ``HOME`` and ``TMPDIR`` inside the bubblewrap sandbox."""
SDK_ROOT = "/arena-sdk"
"""The synthetic import root inside the sandbox (the bot's ``PYTHONPATH``, see ``view``)."""

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
DEFAULT_DISK_BYTES = 64 << 20
REPO_ROOT = Path(arena.__file__).resolve().parent.parent
"""The folder holding the ``arena`` and ``protocol`` packages; on the PYTHONPATH of a bot in
the fallback (bubblewrap shows only the SDK packages, see ``view``)."""

BOT_UID = 65534
"""The uid (and gid) a bot runs as under bubblewrap: ``nobody``."""
ROOT_CAPS = ("--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
             "--cap-add", "CAP_SETPCAP")
"""bwrap's capabilities for a sandbox started by root: only what ``drop_root`` needs."""

_BWRAP_NAMESPACES = ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts")
_PROBE_TIMEOUT_S = 10.0


class SandboxError(ArenaError):
    """The sandbox could not be set up (a harness problem, never the bot's fault)."""

    code = "sandbox"


class SandboxMode(enum.StrEnum):
    """``auto``: bubblewrap if it works here, else the fallback with a loud warning;
    ``bwrap``: bubblewrap or SandboxError; ``fallback``: process group + rlimits only."""

    AUTO = "auto"
    BWRAP = "bwrap"
    FALLBACK = "fallback"


@dataclass(frozen=True, slots=True)
class Limits:
    """Resource limits applied to the bot with ``prlimit`` (None = leave unlimited).

    ``file_size_bytes`` (RLIMIT_FSIZE) caps each file the bot writes. ``processes``
    (RLIMIT_NPROC) is ignored by the kernel for root. ``cpu_seconds`` is the soft limit
    (SIGXCPU); the hard limit one second later sends SIGKILL. ``disk_bytes`` bounds
    everything the bot writes under bubblewrap (its working directory, ``/tmp`` and
    ``/dev/shm`` are size-limited tmpfs); not a prlimit, and not bounded in the fallback.
    ``pids`` and ``cpus`` are the bot's control-group limits (``arena.botproc.cgroups``),
    beside ``address_space_bytes`` as its memory limit there. ``log_bytes`` caps the bot's
    stdout and stderr together, over all its launches in a tournament (``logsink``).
    """

    address_space_bytes: int | None = 1 << 30
    cpu_seconds: int | None = 3600
    open_files: int | None = 256
    file_size_bytes: int | None = 16 << 20
    processes: int | None = None
    disk_bytes: int | None = DEFAULT_DISK_BYTES
    pids: int | None = 64
    cpus: float | None = 1.0
    log_bytes: int | None = 32 << 20

    def __post_init__(self) -> None:
        self.cgroup_limits()  # checks pids and cpus
        for name in ("address_space_bytes", "cpu_seconds", "open_files", "file_size_bytes",
                     "processes", "disk_bytes", "log_bytes"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or value < 1):
                raise ValueError(f"Limits.{name} must be a positive integer or None, "
                                 f"got {value!r}")

    def cgroup_limits(self, cores: tuple[int, ...] | None = None) -> CgroupLimits:
        """The limits of the bot's control group: pids, memory, CPUs, and the ``cores`` it runs on."""
        return CgroupLimits(pids=self.pids, memory_bytes=self.address_space_bytes, cpus=self.cpus, cores=cores)

    def prlimit_args(self) -> list[str]:
        """The ``prlimit`` options for these limits (core dumps always off)."""
        args = ["--core=0"]
        if self.address_space_bytes is not None:
            args.append(f"--as={self.address_space_bytes}")
        if self.cpu_seconds is not None:
            args.append(f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 1}")
        if self.open_files is not None:
            args.append(f"--nofile={self.open_files}")
        if self.file_size_bytes is not None:
            args.append(f"--fsize={self.file_size_bytes}")
        if self.processes is not None:
            args.append(f"--nproc={self.processes}")
        return args


def prlimit_path() -> str:
    """The ``prlimit`` executable (util-linux), or SandboxError."""
    path = shutil.which("prlimit")
    if path is None:
        raise SandboxError("prlimit (util-linux) is not installed; it applies the bots' "
                           "rlimits: apt-get install util-linux")
    return path


def setpriv_pdeathsig() -> list[str]:
    """``setpriv --pdeathsig KILL --`` if available: the fallback's main bot process then dies
    with the arena. Empty if setpriv is missing."""
    path = _which_setpriv()
    return [path, "--pdeathsig", "KILL", "--"] if path else []


def drop_root(uid: int = BOT_UID, gid: int = BOT_UID) -> list[str]:
    """``setpriv`` switching to ``uid`` and ``gid`` with no capabilities, an empty bounding set and no new
    privileges, ending with ``--``; SandboxError if setpriv is missing."""
    path = _which_setpriv()
    if path is None:
        raise SandboxError("setpriv (util-linux) is not installed; the arena runs as root and "
                           "needs it to start bots as an unprivileged user: apt-get install util-linux")
    return [path, f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]


@functools.cache
def _which_setpriv() -> str | None:
    return shutil.which("setpriv")


@functools.cache
def bwrap_status() -> tuple[str | None, str]:
    """(path to a working bwrap or None, reason). Tried once per process with a real sandbox."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bubblewrap (bwrap) is not installed"
    # The features the real sandbox uses: sized tmpfs with modes, and (as root) the uid switch.
    cmd = [path, *_BWRAP_NAMESPACES, "--die-with-parent", "--new-session",
           "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
           "--perms", "1777", "--size", str(1 << 20), "--tmpfs", "/tmp", "--remount-ro", "/"]
    try:
        cmd += [*ROOT_CAPS, "--", *drop_root(), "true"] if os.geteuid() == 0 else ["--", "true"]
    except SandboxError as exc:
        return None, str(exc)
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, timeout=_PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"bubblewrap at {path} failed to start a test sandbox: {exc}"
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip()[-500:]
        return None, f"bubblewrap at {path} cannot create a sandbox here: {why}"
    return path, "ok"


_warned_fallback = False


def resolve_mode(mode: SandboxMode | str) -> SandboxMode:
    """The mode actually used: BWRAP or FALLBACK. Warns loudly (once) when ``auto`` falls back."""
    global _warned_fallback
    try:
        mode = SandboxMode(mode)
    except ValueError:
        raise SandboxError(f"unknown sandbox mode {mode!r}; use one of "
                           f"{', '.join(m.value for m in SandboxMode)}") from None
    if mode is SandboxMode.FALLBACK:
        return mode
    path, reason = bwrap_status()
    if path is not None:
        return SandboxMode.BWRAP
    if mode is SandboxMode.BWRAP:
        raise SandboxError(f"sandbox 'bwrap' requested but {reason}")
    if not _warned_fallback:
        _warned_fallback = True
        log.warning("!!! %s: bots will run WITHOUT a sandbox, as this user, seeing the whole "
                    "machine (no namespaces, no disk bound, writable filesystem); only process groups "
                    "and rlimits apply. This is NOT a security boundary: do not run untrusted bots. "
                    "Install bubblewrap (apt-get install bubblewrap). !!!", reason)
    return SandboxMode.FALLBACK


def clean_env(*, home: str, manifest_env: Mapping[str, str], extra: Mapping[str, str],
              sandboxed: bool = False) -> dict[str, str]:
    """The bot's whole environment: a fixed base, then the manifest's env, then ``extra``.

    ``PYTHONPATH`` is the sandbox's SDK root under bubblewrap (``sandboxed``), else the
    project root (the fallback shows the bot the whole host anyway).
    """
    venv_bin = str(Path(sys.executable).parent)
    env = {
        "PATH": f"{venv_bin}:{DEFAULT_PATH}",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONPATH": SDK_ROOT if sandboxed else str(REPO_ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(manifest_env)
    env.update(extra)
    return env


def prefix_command(limits: Limits, argv: Sequence[str], *, pdeathsig: bool) -> list[str]:
    """``[setpriv --pdeathsig KILL --] prlimit <limits> -- argv``."""
    head = setpriv_pdeathsig() if pdeathsig else []
    return [*head, prlimit_path(), *limits.prlimit_args(), "--", *argv]
