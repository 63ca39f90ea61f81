"""Per-bot control groups: the unit of limits, CPU accounting, freezing and clean-up.

Every bot launch gets its own group, ``sixty-six-arena/<run-id>/<bot>-<pid>-<n>``, nested
under the arena's own group in each hierarchy. The launcher joins the group before it execs
bubblewrap (``JOIN_SCRIPT``), so the whole sandbox is inside it before any code of the bot
runs. A group carries a pids limit, a memory limit and a CPU cap (CFS quota); it accounts CPU
time; it is frozen while its bot owes no answer; and killing it kills every process in it.
With cgroup v1 a run also keeps one empty group, ``<run-id>/freezer-anchor``, frozen while it
lasts, which makes freezing and thawing the bots much cheaper (``FREEZER_ANCHOR_WHY``).

Two backends share one small interface, :class:`Hierarchy`: cgroup v1 (a mount per
controller: ``cpu``, ``cpuacct``, ``memory``, ``pids``, ``freezer``) and cgroup v2 (the
unified hierarchy with ``cpu``, ``memory`` and ``pids``). :func:`hierarchy` picks one at run
time; where neither works (not root, read-only, controllers missing) it warns loudly once and
bots run without groups. ``ARENA_CGROUPS=off`` turns them off on purpose (diagnostics and the
fairness benchmark's baseline).

A run's groups also die with the run: :func:`begin_run` starts a watchdog outside every bot's
group that waits for end-of-file on a pipe whose write ends only the arena's processes hold;
once they are all gone, even by SIGKILL, it kills the run's groups and every process still
marked with the run's id (``ARENA_RUN`` in its environment, which every process of a bot
inherits). :func:`sweep_leftovers` ends an earlier run's leftovers from its record in the run
folder (``.runs/<run-id>.jsonl``: the groups and pids it launched).
"""

from __future__ import annotations

import errno
import functools
import json
import logging
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from arena.botproc import procfs
from arena.botproc.cores import cpu_list

log = logging.getLogger(__name__)

SCOPE = "sixty-six-arena"
"""The folder, in each hierarchy, that holds every run's groups."""
ENV_RUN = "ARENA_RUN"
"""The environment variable that marks every process of a run's bots with the run id."""
ENV_SWITCH = "ARENA_CGROUPS"
RUNS_FOLDER = ".runs"
V1_CONTROLLERS = ("cpu", "cpuacct", "memory", "pids", "freezer")
V2_CONTROLLERS = ("cpu", "memory", "pids")
PINNING_CONTROLLER = "cpuset"  # optional: pins bots to cores (arena.botproc.cores); without it they are not pinned
CFS_PERIOD_US = 100_000
V1_SHARES, V2_WEIGHT = 1024, 100  # the scope's CPU weight: the kernel's default, no more
SCOPE_WEIGHT_WHY = """The scope weighs what one ordinary process weighs, so however busy the bots
are, the arena's own processes (the referees and their clocks, outside the scope) get a CPU
within a scheduler slice. With the scheduler's highest weight (262144, until 2026-12) the scope
ran first whenever any bot inside it could run: two capped CPU hogs thawed in two matches held
both cores, and the arena's workers waited up to a second for a CPU with innocent bots' answers
unread, their clocks running (an innocent expert was charged timeouts on a CI clone at 10 ms
clocks). Bots still share the scope's time fairly with each other: every bot's group has the
same weight inside it, each is capped by its own quota, and frozen bots use nothing."""
FREEZER_ANCHOR = "freezer-anchor"
"""The empty group in each run's folder that stays frozen while the run lasts (cgroup v1)."""
FREEZER_ANCHOR_WHY = """cgroup v1's freezer turns a kernel-wide switch (a static key) on when the
first group on the machine starts to freeze and off when the last one thaws, and each turn patches
kernel code on every CPU. Freezing and thawing an empty group cost its writer 164 us of CPU here
alone, 3.3 us with another group frozen meanwhile. With several games per bot, every bot may owe
an answer at once, so the first freeze and the last thaw of such moments turned the switch: a
multiplexed run's freezer writes cost the arena 50-58 us of CPU each, 25-30 us with the anchor. So
each run keeps one empty group frozen until it ends."""
KILL_TIMEOUT_S = 5.0
REMOVE_TIMEOUT_S = 1.0

# Joins every cgroup.procs file named before "--", then execs the rest: the sandbox starts
# inside the bot's group. Exit 125 if a group cannot be joined (the launch then fails).
JOIN_SCRIPT = 'for f; do shift; [ "$f" = -- ] && break; echo $$ > "$f" || exit 125; done; exec "$@"'

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")
_RUN_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class CgroupError(OSError):
    """A control group could not be made, changed or removed."""


@dataclass(frozen=True, slots=True)
class CgroupLimits:
    """What a bot's group allows: processes, memory (bytes) and CPUs (None = unlimited)."""

    pids: int | None = 64
    memory_bytes: int | None = 1 << 30
    cpus: float | None = 1.0
    cores: tuple[int, ...] | None = None  # the cores its processes may run on (None: the arena's)

    def __post_init__(self) -> None:
        for name in ("pids", "memory_bytes"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"CgroupLimits.{name} must be a positive integer or None, got {value!r}")
        if self.cpus is not None and (isinstance(self.cpus, bool) or not isinstance(self.cpus, (int, float))
                                      or not 0.01 <= self.cpus <= 1024):
            raise ValueError(f"CgroupLimits.cpus must be between 0.01 and 1024 or None, got {self.cpus!r}")
        if self.cores is not None and (not self.cores or not all(
                isinstance(core, int) and not isinstance(core, bool) and core >= 0 for core in self.cores)):
            raise ValueError(f"CgroupLimits.cores must be core numbers or None, got {self.cores!r}")

    @property
    def quota_us(self) -> int | None:
        """The CFS quota per ``CFS_PERIOD_US`` period, or None for no cap."""
        return None if self.cpus is None else max(1000, round(self.cpus * CFS_PERIOD_US))


# ---------------------------------------------------------------------- the interface


class Hierarchy(ABC):
    """One cgroup backend. A group is named by its path relative to the scope folder."""

    kind: str
    pins: bool = False  # whether ``CgroupLimits.cores`` holds (a cpuset controller is at hand)

    @abstractmethod
    def dirs(self, rel: str) -> list[Path]:
        """The group's directory in every hierarchy it spans."""

    @abstractmethod
    def make(self, rel: str, limits: CgroupLimits) -> None:
        """Create the group (and its parents) and apply ``limits``."""

    freeze_words: tuple[bytes, bytes]  # what the freezer file takes to freeze, and to thaw

    @abstractmethod
    def freezer_file(self, rel: str) -> Path:
        """The file that freezes and thaws the group."""

    @abstractmethod
    def cpu_file(self, rel: str) -> Path:
        """The file that holds the group's CPU time."""

    @abstractmethod
    def parse_cpu_ns(self, raw: bytes) -> int:
        """The CPU nanoseconds in the contents of ``cpu_file``."""

    def cpu_ns(self, rel: str) -> int | None:
        """CPU time used by the group's processes so far, in nanoseconds."""
        try:
            with open(self.cpu_file(rel), "rb") as fh:
                return self.parse_cpu_ns(fh.read())
        except (OSError, ValueError):
            return None

    def set_frozen(self, rel: str, frozen: bool) -> None:
        """Freeze or thaw every process in the group."""
        _write(self.freezer_file(rel), self.freeze_words[0 if frozen else 1].decode())

    def thaw_tree(self, rel: str) -> None:
        """Thaw the group and every subgroup (a subgroup frozen itself stays frozen when only
        its parent is thawed)."""
        for top in self.dirs(rel):
            for folder, _subdirs, _files in os.walk(top):
                try:
                    self.set_frozen(str(Path(folder).relative_to(self._root(top, rel))), False)
                except (OSError, ValueError):
                    continue

    @staticmethod
    def _root(top: Path, rel: str) -> Path:
        """The scope folder of the hierarchy that ``top`` (group ``rel``'s directory) is in."""
        root = top
        for _ in Path(rel).parts:
            root = root.parent
        return root

    def hold_freezer_on(self, rel: str) -> None:
        """Make ``rel`` an empty group that stays frozen, where that makes freezing cheaper (see
        FREEZER_ANCHOR_WHY); by default nothing."""

    @abstractmethod
    def is_frozen(self, rel: str) -> bool:
        """Whether the group is frozen completely."""

    @abstractmethod
    def oom_kills(self, rel: str) -> int:
        """How many of the group's processes the kernel killed for exceeding its memory limit."""

    def procs_files(self, rel: str) -> list[Path]:
        """The files a process writes its pid to in order to join the group."""
        return [d / "cgroup.procs" for d in self.dirs(rel)]

    def pids(self, rel: str) -> set[int]:
        """Every process in the group and its subgroups."""
        found: set[int] = set()
        for top in self.dirs(rel):
            for folder, _subdirs, _files in os.walk(top):
                try:
                    found.update(int(p) for p in Path(folder, "cgroup.procs").read_text().split())
                except (OSError, ValueError):
                    continue
        return found

    def children(self, rel: str) -> list[str]:
        """The names of the group's direct subgroups (in any hierarchy)."""
        names: set[str] = set()
        for top in self.dirs(rel):
            try:
                names.update(e.name for e in os.scandir(top) if e.is_dir(follow_symlinks=False))
            except OSError:
                continue
        return sorted(names)

    def kill(self, rel: str, timeout: float = KILL_TIMEOUT_S) -> bool:
        """SIGKILL every process of the group and wait until it is empty; True if it is.

        Frozen first, so that nothing forks while it is being emptied, then thawed: a frozen
        process takes its SIGKILL only once thawed (cgroup v1).
        """
        deadline = time.monotonic() + timeout
        try:
            self.set_frozen(rel, True)
        except OSError:
            pass
        while time.monotonic() < deadline and not self._quiet(rel):
            time.sleep(0.001)
        while True:
            pids = self.pids(rel)
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self.thaw_tree(rel)  # a frozen process takes its SIGKILL once thawed
            if not pids or not self._live(pids):
                return True
            if time.monotonic() >= deadline:
                log.error("cgroup %s still holds %s after SIGKILL", rel, sorted(pids))
                return False
            time.sleep(0.002)

    def _quiet(self, rel: str) -> bool:
        try:
            return self.is_frozen(rel) or not self.pids(rel)
        except OSError:
            return True

    @staticmethod
    def _live(pids: Iterable[int]) -> bool:
        return any((info := procfs.read_stat(p)) is not None and info.state not in ("Z", "X") for p in pids)

    def remove(self, rel: str, timeout: float = REMOVE_TIMEOUT_S) -> bool:
        """Remove the group's directories (deepest first); True if none is left.

        A folder that is busy is tried again until ``timeout``: a killed process leaves its
        group only once all its threads have exited, some time after its main thread is a
        zombie (which is when ``kill`` counts it dead).
        """
        ok = True
        deadline = time.monotonic() + timeout
        for top in self.dirs(rel):
            if not top.exists():
                continue
            for folder, _subdirs, _files in sorted(os.walk(top), key=lambda w: -len(w[0])):
                while True:
                    try:
                        os.rmdir(folder)
                    except FileNotFoundError:
                        pass
                    except OSError as exc:
                        if exc.errno == errno.EBUSY and time.monotonic() < deadline:
                            time.sleep(0.002)
                            continue
                        log.warning("could not remove cgroup %s: %s", folder, exc)
                        ok = False
                    break
        return ok

    def clear(self, rel: str, timeout: float = KILL_TIMEOUT_S) -> bool:
        """Kill and remove the group and everything below it; True if nothing is left."""
        emptied = self.kill(rel, timeout)
        return self.remove(rel) and emptied


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _write(path: Path, value: str) -> None:
    try:
        with open(path, "w") as fh:
            fh.write(value)
    except OSError as exc:
        raise CgroupError(exc.errno, f"cannot write {value!r} to {path}: {exc.strerror}") from None


def _read(path: Path) -> str:
    with open(path) as fh:
        return fh.read()


def _keyed(path: Path, key: str) -> int:
    """The value of ``key`` in a flat-keyed cgroup file (``usage_usec 123``), 0 if absent."""
    for line in _read(path).splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


class V1Hierarchy(Hierarchy):
    """cgroup v1: one directory per controller, each under the arena's own group there."""

    kind = "v1"

    def __init__(self, bases: dict[str, Path]) -> None:
        self.bases = bases  # controller -> its scope folder
        self.pins = PINNING_CONTROLLER in bases

    def dirs(self, rel: str) -> list[Path]:
        return list(dict.fromkeys(base / rel for base in self.bases.values()))

    def _dir(self, controller: str, rel: str) -> Path:
        return self.bases[controller] / rel

    def make(self, rel: str, limits: CgroupLimits) -> None:
        try:
            for folder in self.dirs(rel):
                folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CgroupError(exc.errno, f"cannot create cgroup {rel}: {exc}") from None
        _write(self.bases["cpu"] / "cpu.shares", str(V1_SHARES))  # see SCOPE_WEIGHT_WHY
        if limits.pids is not None:
            _write(self._dir("pids", rel) / "pids.max", str(limits.pids))
        if limits.memory_bytes is not None:
            memory = self._dir("memory", rel)
            _write(memory / "memory.limit_in_bytes", str(limits.memory_bytes))
            if (memory / "memory.memsw.limit_in_bytes").exists():  # swap counts too
                _write(memory / "memory.memsw.limit_in_bytes", str(limits.memory_bytes))
        cpu = self._dir("cpu", rel)
        _write(cpu / "cpu.cfs_period_us", str(CFS_PERIOD_US))
        _write(cpu / "cpu.cfs_quota_us", str(limits.quota_us or -1))
        if self.pins:
            self._make_cpuset(rel, limits.cores)

    def _make_cpuset(self, rel: str, cores: tuple[int, ...] | None) -> None:
        """A v1 cpuset starts empty, and a process cannot join an empty one: each level of the
        path gets its parent's cores and memory nodes, and the bot's group ``cores`` if given."""
        folder = self.bases[PINNING_CONTROLLER].parent
        for part in (SCOPE, *Path(rel).parts):
            parent, folder = folder, folder / part
            for name in ("cpuset.mems", "cpuset.cpus"):
                if not _read(folder / name).strip():
                    _write(folder / name, _read(parent / name).strip())
        if cores is not None:
            _write(folder / "cpuset.cpus", cpu_list(cores))

    freeze_words = (b"FROZEN", b"THAWED")

    def freezer_file(self, rel: str) -> Path:
        return self._dir("freezer", rel) / "freezer.state"

    def cpu_file(self, rel: str) -> Path:
        return self._dir("cpuacct", rel) / "cpuacct.usage"

    def parse_cpu_ns(self, raw: bytes) -> int:
        return int(raw)

    def hold_freezer_on(self, rel: str) -> None:
        folder = self._dir("freezer", rel)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _write(folder / "freezer.state", "FROZEN")
        except OSError as exc:  # freezing bots still works, at a higher cost
            log.warning("cannot keep the empty cgroup %s frozen: %s", rel, exc)

    def is_frozen(self, rel: str) -> bool:
        return _read(self._dir("freezer", rel) / "freezer.state").strip() == "FROZEN"

    def oom_kills(self, rel: str) -> int:
        try:
            return _keyed(self._dir("memory", rel) / "memory.oom_control", "oom_kill")
        except (OSError, ValueError):
            return 0


class V2Hierarchy(Hierarchy):
    """cgroup v2: one unified tree; the scope folder delegates cpu, memory and pids."""

    kind = "v2"

    def __init__(self, base: Path) -> None:
        self.base = base  # the scope folder
        try:
            self.pins = PINNING_CONTROLLER in _read(base / "cgroup.controllers").split()
        except OSError:
            self.pins = False
        handed_down = (*V2_CONTROLLERS, PINNING_CONTROLLER) if self.pins else V2_CONTROLLERS
        self._enable = " ".join(f"+{c}" for c in handed_down)

    def dirs(self, rel: str) -> list[Path]:
        return [self.base / rel]

    def make(self, rel: str, limits: CgroupLimits) -> None:
        folder = self.base
        enable = self._enable
        for part in Path(rel).parts:  # every inner node hands the controllers down
            _write(folder / "cgroup.subtree_control", enable)
            folder = folder / part
            try:
                folder.mkdir(exist_ok=True)
            except OSError as exc:
                raise CgroupError(exc.errno, f"cannot create cgroup {folder}: {exc}") from None
        _write(self.base / "cpu.weight", str(V2_WEIGHT))  # see SCOPE_WEIGHT_WHY
        if limits.pids is not None:
            _write(folder / "pids.max", str(limits.pids))
        if limits.memory_bytes is not None:
            _write(folder / "memory.max", str(limits.memory_bytes))
            if (folder / "memory.swap.max").exists():
                _write(folder / "memory.swap.max", "0")
        quota = limits.quota_us
        _write(folder / "cpu.max", f"{quota if quota is not None else 'max'} {CFS_PERIOD_US}")
        if self.pins and limits.cores is not None:  # an empty cpuset.cpus is the parent's cores
            _write(folder / "cpuset.cpus", cpu_list(limits.cores))

    freeze_words = (b"1", b"0")

    def freezer_file(self, rel: str) -> Path:
        return self.base / rel / "cgroup.freeze"

    def cpu_file(self, rel: str) -> Path:
        return self.base / rel / "cpu.stat"

    def parse_cpu_ns(self, raw: bytes) -> int:
        for line in raw.decode().splitlines():
            name, _, value = line.partition(" ")
            if name == "usage_usec":
                return int(value) * 1000
        raise ValueError("no usage_usec in cpu.stat")

    def is_frozen(self, rel: str) -> bool:
        return _keyed(self.base / rel / "cgroup.events", "frozen") == 1

    def oom_kills(self, rel: str) -> int:
        try:
            return _keyed(self.base / rel / "memory.events", "oom_kill")
        except (OSError, ValueError):
            return 0

    def kill(self, rel: str, timeout: float = KILL_TIMEOUT_S) -> bool:
        folder = self.base / rel
        if (folder / "cgroup.kill").exists():  # Linux 5.14+: one write kills the whole group
            try:
                _write(folder / "cgroup.kill", "1")
            except OSError:
                pass
        return super().kill(rel, timeout)


# ---------------------------------------------------------------------- detection


@dataclass(frozen=True, slots=True)
class _Mount:
    root: str
    point: Path
    fstype: str
    options: frozenset[str]


def _mounts(mountinfo: Path) -> list[_Mount]:
    mounts = []
    for line in _read(mountinfo).splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        point = fields[4].replace("\\040", " ")
        mounts.append(_Mount(fields[3], Path(point), tail[0], frozenset(tail[2].split(","))))
    return mounts


def _own_groups(proc_cgroup: Path) -> dict[str, str]:
    """``/proc/self/cgroup`` as controller -> path ('' is the v2 entry)."""
    groups = {}
    for line in _read(proc_cgroup).splitlines():
        _, controllers, path = line.split(":", 2)
        for name in controllers.split(",") if controllers else [""]:
            groups[name] = path
    return groups


def _under(mount: _Mount, path: str) -> Path:
    """The directory of cgroup ``path`` inside ``mount`` (which may show only a subtree)."""
    root = mount.root.rstrip("/")
    rel = path[len(root):] if root and path.startswith(root) else path
    return mount.point / rel.lstrip("/")


def _probe(hier: Hierarchy) -> None:
    """Make, use and remove a throwaway group; raises OSError if anything fails."""
    rel = f"probe-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        hier.make(rel, CgroupLimits())
        hier.cpu_ns(rel)
        hier.set_frozen(rel, True)
        hier.set_frozen(rel, False)
    finally:
        hier.remove(rel)


def detect(mountinfo: Path = Path("/proc/self/mountinfo"),
           proc_cgroup: Path = Path("/proc/self/cgroup")) -> tuple[Hierarchy | None, str]:
    """(a working backend or None, why none): v2 if it has cpu, memory and pids, else v1."""
    try:
        mounts, own = _mounts(mountinfo), _own_groups(proc_cgroup)
    except (OSError, ValueError) as exc:
        return None, f"cannot read the process's control groups: {exc}"
    reasons = []
    for mount in [m for m in mounts if m.fstype == "cgroup2"]:
        try:
            available = set(_read(mount.point / "cgroup.controllers").split())
        except OSError:
            continue
        if not set(V2_CONTROLLERS) <= available:
            reasons.append(f"cgroup v2 at {mount.point} lacks {', '.join(sorted(set(V2_CONTROLLERS) - available))}")
            continue
        hier, why = _v2_at(mount, own.get("", "/"))
        if hier is not None:
            return hier, "ok"
        reasons.append(why)
    bases: dict[str, Path] = {}
    for controller in (*V1_CONTROLLERS, PINNING_CONTROLLER):
        found = next((m for m in mounts if m.fstype == "cgroup" and controller in m.options), None)
        if found is not None and controller in own:
            bases[controller] = _under(found, own[controller]) / SCOPE
    missing = [c for c in V1_CONTROLLERS if c not in bases]
    if missing:
        reasons.append(f"cgroup v1 controller {missing[0]} is not mounted")
    else:
        unpinned = {c: path for c, path in bases.items() if c != PINNING_CONTROLLER}
        for tried in [bases, unpinned] if len(unpinned) < len(bases) else [bases]:  # pinning is optional
            hier1 = V1Hierarchy(tried)
            try:
                _probe(hier1)
                return hier1, "ok"
            except OSError as exc:
                why = f"cgroup v1 is not usable: {exc}"
        reasons.append(why)
    return None, "; ".join(reasons) or "no cgroup hierarchy is mounted"


def _v2_at(mount: _Mount, own: str) -> tuple[Hierarchy | None, str]:
    """A v2 scope under the arena's own group if that group can delegate, else at the root."""
    why = ""
    for parent in dict.fromkeys([_under(mount, own), mount.point]):
        scope = parent / SCOPE
        try:
            scope.mkdir(exist_ok=True)
            _write(parent / "cgroup.subtree_control", " ".join(f"+{c}" for c in V2_CONTROLLERS))
            try:  # optional: bots are pinned to cores only where it can be delegated
                _write(parent / "cgroup.subtree_control", f"+{PINNING_CONTROLLER}")
            except OSError:
                pass
            hier = V2Hierarchy(scope)  # after the delegation: it looks up what the scope may pin with
            _probe(hier)
            return hier, "ok"
        except OSError as exc:  # EBUSY: the arena's own group holds processes
            why = f"cgroup v2 at {parent} is not usable: {exc}"
    return None, why


_warned = False
_hierarchy_lock = threading.Lock()


@functools.cache
def _detected() -> tuple[Hierarchy | None, str]:
    if os.environ.get(ENV_SWITCH, "").lower() in ("off", "0", "no"):
        return None, f"turned off by {ENV_SWITCH}={os.environ[ENV_SWITCH]}"
    return detect()


def hierarchy() -> Hierarchy | None:
    """This process's cgroup backend, or None after a loud warning (once per process)."""
    global _warned
    hier, reason = _detected()
    with _hierarchy_lock:
        if hier is None and not _warned:
            _warned = True
            log.warning("!!! control groups unavailable (%s): bots run WITHOUT pids, memory or CPU "
                        "limits, are never frozen between requests, and their CPU time is not "
                        "recorded. Run as root with cgroup v1 controllers %s, or cgroup v2 with %s "
                        "delegated. !!!", reason, ", ".join(V1_CONTROLLERS), ", ".join(V2_CONTROLLERS))
    return hier


def default_concurrency(cores: int | None = None) -> int:
    """Parallel pairs whose running bots fit the cores: with freezing only the bot to move
    runs, one per pair; without it both bots of a pair may run at once."""
    if cores is None:
        cores = _cores()
    return max(1, cores if _detected()[0] is not None else cores // 2)


# ---------------------------------------------------------------------- one bot's group


class BotCgroup:
    """One bot launch's control group."""

    def __init__(self, hier: Hierarchy, rel: str) -> None:
        self.hierarchy = hier
        self.rel = rel
        self._frozen = False
        self._fds: dict[str, int] = {}  # the freezer and CPU files, kept open: twice per decision

    def __repr__(self) -> str:
        return f"<BotCgroup {self.hierarchy.kind}:{self.rel}>"

    def join_prefix(self) -> list[str]:
        """The command prefix that starts a process inside this group (see JOIN_SCRIPT)."""
        return ["/bin/sh", "-c", JOIN_SCRIPT, "arena-cgroup",
                *(str(p) for p in self.hierarchy.procs_files(self.rel)), "--"]

    def _fd(self, which: str) -> int:
        fd = self._fds.get(which)
        if fd is None:
            if which == "cpu":
                fd = os.open(self.hierarchy.cpu_file(self.rel), os.O_RDONLY | os.O_CLOEXEC)
            else:
                fd = os.open(self.hierarchy.freezer_file(self.rel), os.O_WRONLY | os.O_CLOEXEC)
            self._fds[which] = fd
        return fd

    def _close_files(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def cpu_ns(self) -> int | None:
        """CPU nanoseconds used by every process of the bot so far."""
        try:
            return self.hierarchy.parse_cpu_ns(os.pread(self._fd("cpu"), 4096, 0))
        except (OSError, ValueError):
            return None

    def freeze(self) -> None:
        """Stop every process of the bot until ``thaw()``."""
        if not self._frozen:
            self._frozen = True
            self._set(True)

    def thaw(self) -> None:
        """Let the bot run again."""
        if self._frozen:
            self._frozen = False
            self._set(False)

    def _set(self, frozen: bool) -> None:
        try:
            os.write(self._fd("freezer"), self.hierarchy.freeze_words[0 if frozen else 1])
        except OSError as exc:
            log.warning("cannot %s cgroup %s: %s", "freeze" if frozen else "thaw", self.rel, exc)

    @property
    def frozen(self) -> bool:
        """Whether this group was last frozen (not thawed)."""
        return self._frozen

    def pids(self) -> set[int]:
        """Every process in the group now."""
        return self.hierarchy.pids(self.rel)

    def oom_kills(self) -> int:
        """Processes the kernel killed for going over the memory limit."""
        return self.hierarchy.oom_kills(self.rel)

    def kill(self, timeout: float = KILL_TIMEOUT_S) -> bool:
        """SIGKILL everything in the group; True once it is empty."""
        self._frozen = False
        return self.hierarchy.kill(self.rel, timeout)

    def remove(self) -> bool:
        """Kill what is left and remove the group; True if it is gone."""
        self._close_files()
        return self.hierarchy.clear(self.rel)


# ---------------------------------------------------------------------- a run's groups


class RunGroups:
    """The groups of one arena run (``SCOPE/<run-id>/...``) and its watchdog."""

    def __init__(self, run_id: str, *, watch: bool = True) -> None:
        if not _RUN_ID.match(run_id):
            raise ValueError(f"run id {run_id!r}: use 1-64 letters, digits, '.', '_' or '-'")
        self.run_id = run_id
        self._count = 0
        self._anchored = False  # FREEZER_ANCHOR made, by this process or before it forked
        self._lock = threading.Lock()
        self._owner = os.getpid()
        self._watch_w: int | None = None
        if watch:
            self._start_watchdog()

    @property
    def hierarchy(self) -> Hierarchy | None:
        """The backend new groups are made with (looked up each time: tests turn it off)."""
        return hierarchy()

    def new_bot(self, name: str, limits: CgroupLimits) -> BotCgroup | None:
        """A new group for one launch of bot ``name`` (None without cgroups)."""
        hier = self.hierarchy
        if hier is None:
            return None
        with self._lock:
            self._count += 1
            rel = f"{self.run_id}/{_SLUG.sub('_', name)[:40] or 'bot'}-{os.getpid()}-{self._count}"
            if not self._anchored:
                self._anchored = True
                hier.hold_freezer_on(f"{self.run_id}/{FREEZER_ANCHOR}")
        hier.make(rel, limits)
        return BotCgroup(hier, rel)

    def clear(self) -> bool:
        """Kill and remove every group of the run; True if nothing is left."""
        hier = self.hierarchy
        return hier is None or hier.clear(self.run_id)

    def close(self) -> None:
        """The run is over in this process: let its watchdog end whatever is left of it (once
        every process holding the pipe, e.g. workers forked meanwhile, is gone too)."""
        global _run
        if self._watch_w is not None and os.getpid() == self._owner:
            os.close(self._watch_w)
            self._watch_w = None
        with _run_lock:
            if _run is self:
                _run = None

    def clear_launched_by(self, pids: Iterable[int]) -> int:
        """Kill and remove the groups that the processes ``pids`` made (dead workers: their
        bots may be frozen, out of reach of any other clean-up); how many groups."""
        hier = self.hierarchy
        if hier is None:
            return 0
        wanted = {str(p) for p in pids}
        mine = [name for name in hier.children(self.run_id)
                if len(parts := name.rsplit("-", 2)) == 3 and parts[1] in wanted]
        for name in mine:
            hier.clear(f"{self.run_id}/{name}")
        return len(mine)

    def _start_watchdog(self) -> None:
        """The process that ends the run's bots once every arena process is gone."""
        read_end, self._watch_w = os.pipe()  # both close-on-exec: bots never hold the write end
        try:
            helper = subprocess.Popen(
                ["/bin/sh", "-c", _WATCHDOG, sys.executable, self.run_id], stdin=read_end,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                close_fds=True, env={**os.environ, "PYTHONPATH": _project_path()},
            )
            helper.wait(timeout=10)  # it forks and returns at once: the watchdog is not our child
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("cannot start the cgroup watchdog of run %s: %s", self.run_id, exc)
        finally:
            os.close(read_end)


def _project_path() -> str:
    here = str(Path(__file__).resolve().parents[2])
    rest = os.environ.get("PYTHONPATH")
    return f"{here}:{rest}" if rest else here


# The watchdog (``sh -c _WATCHDOG PYTHON RUN_ID``, its standard input the pipe): it ignores
# signals 1-15, leaves a child behind and exits at once (so the child belongs to nobody), and
# the child waits for end-of-file on the pipe, then starts Python to end the run. The arena
# waits for a shell's fork, not for an interpreter to start. An asynchronous list of a
# non-interactive shell reads /dev/null unless told otherwise: the pipe goes to it as fd 3.
_WATCHDOG = ("trap '' 1 2 3 4 5 6 7 8 10 11 12 13 14 15; exec 3<&0; "
             "{ while read -r _ <&3; do :; done; exec 3<&-; "
             "exec \"$0\" -c 'import sys; from arena.botproc.cgroups import end_run; end_run(sys.argv[1])' \"$1\"; } &")


def end_run(run_id: str, timeout: float = KILL_TIMEOUT_S) -> int:
    """Kill every process of run ``run_id`` (its groups, then its marker); how many were left."""
    left = 0
    hier, _ = _detected()
    if hier is not None:
        left += len(hier.pids(run_id))
        hier.clear(run_id, timeout)
    for pid in procfs.env_processes(ENV_RUN, run_id):
        left += 1
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return left


_run: RunGroups | None = None
_run_lock = threading.Lock()


def begin_run(run_id: str | None = None) -> RunGroups:
    """Make ``run_id`` (default: a new one) this process's run, with its watchdog; call it
    before forking workers, which then share the run."""
    global _run
    with _run_lock:
        _run = RunGroups(run_id or new_run_id())
        return _run


def current_run() -> RunGroups:
    """This process's run (a new one on first use)."""
    global _run
    with _run_lock:
        if _run is None:
            _run = RunGroups(new_run_id())
        return _run


def new_run_id() -> str:
    """A fresh run id: the time and a random part (``20261201T205300-1a2b3c``)."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + f"-{secrets.token_hex(3)}"


def _after_fork_in_child() -> None:
    global _run_lock
    _run_lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


# ---------------------------------------------------------------------- records of launches


def record_launch(run_dir: Path, run_id: str, pid: int, group: BotCgroup | None) -> None:
    """Note a launched sandbox in ``run_dir/.runs/<run-id>.jsonl`` for :func:`sweep_leftovers`."""
    line = {"pid": pid, "start": procfs.start_ticks(pid), "group": None if group is None else group.rel}
    folder = run_dir / RUNS_FOLDER
    try:
        folder.mkdir(exist_ok=True)
        fd = os.open(folder / f"{run_id}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, (json.dumps(line) + "\n").encode())
        finally:
            os.close(fd)
    except OSError as exc:
        log.warning("cannot record launched sandbox %d of run %s: %s", pid, run_id, exc)


def sweep_leftovers(run_dir: Path, current: str) -> int:
    """End what earlier runs recorded in ``run_dir`` left running; how many processes."""
    folder = Path(run_dir) / RUNS_FOLDER
    try:
        records = sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.stem != current)
    except OSError:
        return 0
    ended = 0
    for record in records:
        run_id = record.stem
        for line in record.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
                pid, start = int(entry["pid"]), entry.get("start")
            except (ValueError, KeyError, TypeError):
                continue
            if start is not None and procfs.start_ticks(pid) == start:
                for stray in [pid, *procfs.descendants(pid)]:
                    try:
                        os.kill(stray, signal.SIGKILL)
                        ended += 1
                    except (ProcessLookupError, PermissionError):
                        pass
        ended += end_run(run_id) if _RUN_ID.match(run_id) else 0
        record.unlink(missing_ok=True)
    if ended:
        log.warning("ended %d processes left behind by an earlier run in %s", ended, run_dir)
    return ended
