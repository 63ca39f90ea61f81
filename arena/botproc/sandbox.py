"""How a bot is confined (protocol/PROTOCOL.md section 7): resource limits, bubblewrap arguments, clean env.

Pure command building plus a one-time check that bubblewrap works here. Starting, watching and
stopping processes lives in ``arena.botproc.process``.

Inside the bubblewrap sandbox the bot sees:

- the host root read-only (``--ro-bind / /``), a minimal ``/dev`` and its own ``/proc``;
- its own PID, network, IPC and UTS namespaces (only a loopback of its own: no network);
- an empty, private ``/tmp`` (read-only), in which :data:`SANDBOX_WORKDIR` is its working
  directory and ``HOME``: a fresh folder per launch under the run directory, writable;
- the run directory itself hidden under an empty tmpfs (other bots' logs and working
  directories are not readable), unless it contains the interpreter or the project;
- its bot folder read-only at its own path, and the folders passed as ``expose`` (the arena's
  ``ipc://`` socket folder) read-only at their own paths: connecting to a Unix socket needs no
  write access to the folder, so the bot cannot delete or replace the arena's socket;
- no capabilities and a new session (``--new-session``). The sandbox dies with the process
  that launched it through the guard pipe of ``process.GUARD_SCRIPT``, not through bwrap's
  ``--die-with-parent`` (which can strand bwrap's half-made child).
"""

from __future__ import annotations

import enum
import functools
import logging
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import arena
from arena.errors import ArenaError

log = logging.getLogger(__name__)

SANDBOX_WORKDIR = "/tmp/work"
"""The bot's working directory (and HOME) as seen inside the bubblewrap sandbox."""

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
REPO_ROOT = Path(arena.__file__).resolve().parent.parent
"""The folder holding the ``arena`` and ``protocol`` packages; on the bots' PYTHONPATH."""

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

    ``file_size_bytes`` (RLIMIT_FSIZE) also caps the stdout and stderr logs. ``processes``
    (RLIMIT_NPROC) is ignored by the kernel for root. ``cpu_seconds`` is the soft limit
    (SIGXCPU); the hard limit one second later sends SIGKILL.
    """

    address_space_bytes: int | None = 1 << 30
    cpu_seconds: int | None = 3600
    open_files: int | None = 256
    file_size_bytes: int | None = 16 << 20
    processes: int | None = None

    def __post_init__(self) -> None:
        for name in ("address_space_bytes", "cpu_seconds", "open_files", "file_size_bytes",
                     "processes"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or value < 1):
                raise ValueError(f"Limits.{name} must be a positive integer or None, "
                                 f"got {value!r}")

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


@functools.cache
def _which_setpriv() -> str | None:
    return shutil.which("setpriv")


@functools.cache
def bwrap_status() -> tuple[str | None, str]:
    """(path to a working bwrap or None, reason). Tried once per process with a real sandbox."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bubblewrap (bwrap) is not installed"
    cmd = [path, *_BWRAP_NAMESPACES, "--die-with-parent", "--new-session", "--cap-drop", "ALL",
           "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
           "--", "true"]
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
        log.warning("!!! %s: bots will run WITHOUT a sandbox (no PID/network namespaces, "
                    "writable filesystem); only process groups and rlimits apply. "
                    "Install bubblewrap (apt-get install bubblewrap). !!!", reason)
    return SandboxMode.FALLBACK


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def bwrap_argv(*, bwrap: str, bot_dir: Path, workdir: Path, run_dir: Path,
               expose: Iterable[Path], info_fd: int) -> list[str]:
    """bwrap's arguments up to and including ``--`` (all paths absolute)."""
    argv = [bwrap, *_BWRAP_NAMESPACES, "--new-session",
            "--cap-drop", "ALL", "--info-fd", str(info_fd),
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    needed = [REPO_ROOT, Path(sys.prefix), Path(sys.base_prefix),
              Path(sys.executable).resolve().parent, Path("/usr"), Path("/etc")]
    # The project or its interpreter may live under /tmp (a CI clone there): show them again.
    shown = [p for p in needed if _inside(p, Path("/tmp"))]
    shown = [p for p in shown if not any(q != p and _inside(p, q) for q in shown)]
    for path in dict.fromkeys(shown):
        argv += ["--ro-bind", str(path), str(path)]
    visible = not _inside(run_dir, Path("/tmp")) or any(_inside(run_dir, p) for p in shown)
    if visible and not any(_inside(p, run_dir) for p in needed):
        argv += ["--tmpfs", str(run_dir)]
    for path in (bot_dir, *expose):
        argv += ["--ro-bind", str(path), str(path)]
    argv += ["--bind", str(workdir), SANDBOX_WORKDIR, "--remount-ro", "/tmp",
             "--chdir", SANDBOX_WORKDIR, "--"]
    return argv


def clean_env(*, home: str, manifest_env: Mapping[str, str],
              extra: Mapping[str, str]) -> dict[str, str]:
    """The bot's whole environment: a fixed base, then the manifest's env, then ``extra``."""
    venv_bin = str(Path(sys.executable).parent)
    env = {
        "PATH": f"{venv_bin}:{DEFAULT_PATH}",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(REPO_ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(manifest_env)
    env.update(extra)
    return env


def prefix_command(limits: Limits, argv: Sequence[str], *, pdeathsig: bool) -> list[str]:
    """``[setpriv --pdeathsig KILL --] prlimit <limits> -- argv``."""
    head = setpriv_pdeathsig() if pdeathsig else []
    return [*head, prlimit_path(), *limits.prlimit_args(), "--", *argv]
