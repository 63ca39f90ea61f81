"""Starting, watching and stopping one sandboxed bot process (protocol/PROTOCOL.md section 7).

``start_bot`` is the only way to launch a bot; it returns a :class:`BotProcess`, a context
manager whose ``close()`` kills everything the bot started and reaps it.

With bubblewrap the process we start is ``bwrap``; inside its PID namespace bwrap's own init
(pid 1, "the sandbox init") runs the bot. Killing the sandbox init with SIGKILL makes the kernel
kill every process in the namespace, and the outer bwrap then exits with 128 + signal, which
``returncode`` reports as ``-signal`` like ``subprocess`` does. Without bubblewrap the bot is
the leader of its own process group, and ``kill()`` signals that group plus every descendant it
can still find in /proc.

With control groups (``arena.botproc.cgroups``) every launch starts inside its own group:
the launcher joins it before it execs bubblewrap, so the sandbox and everything the bot
starts are in it from the first instruction. ``kill()`` then empties the group (whatever
re-parented itself out of the process tree included), ``freeze()``/``thaw()`` stop and resume
the whole bot, and ``cpu_ns()`` reads its CPU time.

Stopping is deadline-bound everywhere: no wait in this module is unbounded.
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType

from arena.botproc import cgroups, logsink, procfs
from arena.botproc.cgroups import BotCgroup, CgroupError
from arena.botproc.cores import own_cores, unpin_thread
from arena.botproc.manifest import Manifest
from arena.botproc.sandbox import (
    SANDBOX_WORKDIR, Limits, SandboxError, SandboxMode, bwrap_status, clean_env, prefix_command,
    resolve_mode,
)
from arena.botproc.view import SandboxView, bwrap_argv, link_folders, sandbox_view

log = logging.getLogger(__name__)

STDOUT_LOG = "stdout.log"
STDERR_LOG = "stderr.log"
WORKDIR_NAME = "work"
ENV_ENDPOINT = "ARENA_ENDPOINT"
ENV_TOKEN = "ARENA_TOKEN"
INFO_TIMEOUT_S = 10.0
KILL_TIMEOUT_S = 5.0

_MEMORY_HINTS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory")
_LOG_DRAIN_S = 1.0  # how long close() copies what a dead bot left in its pipes
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


class BotProcess:
    """A running (or finished) sandboxed bot. Use as a context manager, or call ``close()``."""

    def __init__(self, *, manifest: Manifest, popen: subprocess.Popen[bytes],
                 mode: SandboxMode, launch_dir: Path, limits: Limits,
                 init_pid: int | None, init_pidfd: int | None, keep_workdir: bool,
                 cgroup: BotCgroup | None = None,
                 logs: tuple[logsink.LogStream, ...] = ()) -> None:
        self.manifest = manifest
        self.mode = mode
        self.launch_dir = launch_dir
        self.workdir = launch_dir / WORKDIR_NAME
        self.stdout_path = launch_dir / STDOUT_LOG
        self.stderr_path = launch_dir / STDERR_LOG
        self.limits = limits
        self.started_at = time.monotonic()
        self._popen = popen
        self._init_pid = init_pid
        self._init_pidfd = init_pidfd
        self._keep_workdir = keep_workdir
        self.cgroup = cgroup
        self._logs = logs  # stdout's and stderr's copies (see arena.botproc.logsink)
        self._lock = threading.RLock()
        self._killed = False
        self._closed = False
        self.view: SandboxView | None = None
        """What the bot sees under bubblewrap (None in the fallback)."""

    def __repr__(self) -> str:
        state = "closed" if self._closed else self.exit_description()
        return (f"<BotProcess {self.manifest.name} {self.manifest.version} pid={self.pid} "
                f"sandbox={self.mode.value} {state}>")

    def __enter__(self) -> BotProcess:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # -- state ---------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        """Host pid of the process we started (bwrap, or the bot itself in the fallback)."""
        return self._popen.pid

    @property
    def returncode(self) -> int | None:
        """None while running; the exit code; or ``-N`` when the bot died from signal N.

        With bubblewrap a bot that itself exits with 128 + N (N a signal number) is
        indistinguishable from one killed by signal N.
        """
        raw = self._popen.returncode
        if raw is not None and self.mode is SandboxMode.BWRAP and 128 < raw < 128 + 65:
            return -(raw - 128)
        return raw

    @property
    def killed_by_arena(self) -> bool:
        """True if ``kill()``/``close()`` stopped the bot while it was still running."""
        return self._killed

    def poll(self) -> int | None:
        """Reap the process if it has exited; return ``returncode``."""
        self._popen.poll()
        return self.returncode

    def wait(self, timeout: float) -> int | None:
        """Wait at most ``timeout`` seconds; return ``returncode`` (None if still running)."""
        try:
            self._popen.wait(timeout=max(0.0, timeout))
        except subprocess.TimeoutExpired:
            return None
        return self.returncode

    def _attach_init(self, init_pid: int | None) -> None:
        """Record the sandbox init's host pid (from bwrap's info) and pin it with a pidfd."""
        self._init_pid = init_pid
        if init_pid is not None:
            try:
                self._init_pidfd = os.pidfd_open(init_pid)
            except OSError:
                self._init_pidfd = None  # gone already or no pidfd support: use os.kill

    # -- the control group ---------------------------------------------------------------

    def freeze(self) -> None:
        """Stop every process of the bot (no-op without control groups)."""
        if self.cgroup is not None and not self._closed:
            self.cgroup.freeze()

    def thaw(self) -> None:
        """Let a frozen bot run again (no-op without control groups)."""
        if self.cgroup is not None and not self._closed:
            self.cgroup.thaw()

    def cpu_ns(self) -> int | None:
        """CPU nanoseconds the bot has used so far (all its processes), or None unmeasured."""
        return None if self.cgroup is None else self.cgroup.cpu_ns()

    # -- stopping ------------------------------------------------------------------------

    def kill(self, timeout: float = KILL_TIMEOUT_S) -> bool:
        """SIGKILL the whole sandbox and reap it within ``timeout`` s; idempotent.

        Returns True when the process we started has been reaped (and, with bubblewrap, every
        process of the sandbox is gone). Logs an error and returns False on a missed deadline.
        """
        with self._lock:
            deadline = time.monotonic() + timeout
            if self._popen.poll() is None:
                self._killed = True
                log.info("killing bot %s pid=%d", self.manifest.name, self.pid)
            if self.cgroup is not None:  # everything of the bot, wherever it re-parented to
                self.cgroup.kill(max(0.0, deadline - time.monotonic()) * 0.8)
            if self.mode is SandboxMode.BWRAP:
                self._kill_bwrap(deadline)
            else:
                self._kill_group(deadline)
            if self._popen.returncode is None:
                log.error("bot %s pid=%d survived SIGKILL for %.1f s", self.manifest.name,
                          self.pid, timeout)
                return False
            return True

    def _kill_bwrap(self, deadline: float) -> None:
        if self._popen.returncode is None:
            self._signal_init(signal.SIGKILL)
            # The outer bwrap reaps the sandbox init (the kernel has then killed the whole
            # namespace) and exits; give it most of the deadline before killing it directly.
            grace = max(0.0, (deadline - time.monotonic()) * 0.8)
            if self.wait(grace) is None:
                try:
                    self._stop_and_kill_tree()
                except ProcessLookupError:
                    pass
        self.wait(deadline - time.monotonic())

    def _signal_init(self, sig: signal.Signals) -> None:
        try:
            if self._init_pidfd is not None:
                signal.pidfd_send_signal(self._init_pidfd, sig)
            elif self._init_pid is not None:
                os.kill(self._init_pid, sig)
            else:
                self._stop_and_kill_tree()
        except ProcessLookupError:
            pass

    def _stop_and_kill_tree(self) -> None:
        """Without the sandbox init's pid: freeze the outer bwrap so it cannot clone while we
        look, SIGKILL everything below it, then bwrap. (Killing bwrap alone during its set-up
        can leave its child blocked forever, orphaned outside our process tree.)"""
        os.kill(self.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            info = procfs.read_stat(self.pid)
            if info is None or info.state in ("T", "t", "Z", "X"):
                break
            time.sleep(0.001)
        for pid in procfs.descendants(self.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.kill(self.pid, signal.SIGKILL)

    def _kill_group(self, deadline: float) -> None:
        # Descendants first (while the parent links still exist), then the group.
        strays = procfs.descendants(self.pid) if self._popen.returncode is None else []
        _killpg(self.pid)
        for pid in strays:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.wait(deadline - time.monotonic())

    def close(self) -> None:
        """Kill (if running) and reap the bot, then delete its working directory (the logs
        stay). Idempotent and safe to call from several threads."""
        with self._lock:
            if self._closed:
                return
            self.kill()
            self._closed = True
            if self._init_pidfd is not None:
                os.close(self._init_pidfd)
                self._init_pidfd = None
            if self.cgroup is not None:
                self.cgroup.remove()
            for stream in self._logs:
                stream.finish(_LOG_DRAIN_S)
            if not self._keep_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)

    @property
    def closed(self) -> bool:
        """True once ``close()`` has run."""
        return self._closed

    # -- evidence ------------------------------------------------------------------------

    def stderr_tail(self, max_lines: int = 20, max_bytes: int = 4096) -> str:
        """The last lines of the bot's stderr log (for fault records), up to this moment."""
        self._drain_logs()
        return tail_file(self.stderr_path, max_lines=max_lines, max_bytes=max_bytes)

    def stdout_tail(self, max_lines: int = 20, max_bytes: int = 4096) -> str:
        """The last lines of the bot's stdout log, up to this moment."""
        self._drain_logs()
        return tail_file(self.stdout_path, max_lines=max_lines, max_bytes=max_bytes)

    def _drain_logs(self) -> None:
        for stream in self._logs:
            stream.drain()

    def log_cut(self) -> str | None:
        """Why the arena's copier stopped reading the bot's pipes by a failure of its own (the
        bot's writes then fail: a harness fault), or None. A full log volume is not that: the
        pipes are drained on and only the log is lost."""
        self._drain_logs()
        return next((s.error for s in self._logs if s.cut and s.error), None)

    def output_capped(self) -> bool:
        """True if the bot reached its log cap (per bot per tournament) and its output was cut."""
        self._drain_logs()
        return any(s.capped for s in self._logs)

    def exit_description(self) -> str:
        """``running``, ``exit code 3``, ``killed by SIGSEGV``, ``SIGXCPU (CPU limit)``, ...,
        with hints from the stderr tail (out of memory) and the log sizes (output cap)."""
        rc = self.poll()
        if rc is None:
            return "running"
        if rc < 0:
            sig = -rc
            name = _signame(sig)
            if self._killed and sig == signal.SIGKILL:
                text = "killed by the arena (SIGKILL)"
            elif sig == signal.SIGXCPU:
                text = "SIGXCPU (CPU limit)"
            elif sig == signal.SIGXFSZ:
                text = "SIGXFSZ (file size limit)"
            else:
                text = f"killed by {name}"
        else:
            text = f"exit code {rc}"
        hints = []
        tail = self.stderr_tail(max_lines=40)
        if self.cgroup is not None and self.cgroup.oom_kills():
            hints.append(f"out of memory: memory limit {_mib(self.limits.address_space_bytes)}")
        elif any(h in tail for h in _MEMORY_HINTS):
            hints.append("out of memory: address-space limit "
                         f"{_mib(self.limits.address_space_bytes)}")
        if self.output_capped():
            hints.append(f"output cap {_mib(self.limits.log_bytes)} per tournament reached")
        return f"{text} ({'; '.join(hints)})" if hints else text

    def sandbox_pids(self) -> list[int]:
        """Host pids of the live processes we started: the launched process and everything
        below it (in the fallback a double-forked, re-parented process is not found)."""
        table = procfs.process_table()
        if self.pid not in table or table[self.pid].state in ("Z", "X"):
            return []
        return [self.pid, *procfs.descendants(self.pid, table)]

    def helper_pids(self) -> set[int]:
        """The sandbox's own processes, not the bot's: under bubblewrap the outer ``bwrap``,
        the namespace init, the guard shell and its watcher (see ``GUARD_SCRIPT``); none in
        the fallback."""
        if self.mode is not SandboxMode.BWRAP:
            return set()  # the fallback starts the bot's command itself
        table = procfs.process_table()
        helpers = {self.pid} | {p.pid for p in table.values() if p.ppid == self.pid}
        guards = {p.pid for p in table.values() if p.ppid in helpers and p.pid not in helpers and _is_guard(p.pid)}
        watchers = {p.pid for p in table.values() if p.ppid in guards and _is_guard(p.pid)}
        return helpers | guards | watchers

    def main_pid(self) -> int | None:
        """The bot's own main process (the manifest's command), or None once it has ended."""
        if self.poll() is not None:
            return None
        if self.mode is not SandboxMode.BWRAP:
            return self.pid
        helpers = self.helper_pids()
        table = procfs.process_table()
        mains = [p.pid for p in table.values()
                 if p.ppid in helpers and p.pid not in helpers and p.state not in ("Z", "X")]
        return min(mains) if mains else None

    def owns(self, pid: int) -> bool | None:
        """Whether host process ``pid`` runs inside this bot's sandbox (bubblewrap: its PID
        namespace; fallback: the session the bot leads, which its children inherit); None
        when this process may not look (another user's namespaces, without root)."""
        try:
            if self.mode is not SandboxMode.BWRAP:
                return os.getsid(pid) == self.pid
            if self._init_pid is None:
                return None
            return os.stat(f"/proc/{pid}/ns/pid").st_ino == os.stat(f"/proc/{self._init_pid}/ns/pid").st_ino
        except PermissionError:
            return None
        except OSError:  # gone
            return False

    def rss_bytes(self) -> int | None:
        """Summed RSS of the bot's processes (the sandbox's helpers excluded), or None."""
        helpers = self.helper_pids()
        sizes = [procfs.rss_bytes(p) for p in self.sandbox_pids() if p not in helpers]
        known = [s for s in sizes if s is not None]
        return sum(known) if known else None


def start_bot(manifest: Manifest, *, run_dir: Path | str, endpoint: str | None = None,
              token: str | None = None, env: Mapping[str, str] | None = None,
              args: Sequence[str] = (), expose: Iterable[Path | str] = (),
              limits: Limits | None = None, sandbox: SandboxMode | str = SandboxMode.AUTO,
              keep_workdir: bool = False, pinned: bool = False) -> BotProcess:
    """Start ``manifest``'s bot in a sandbox; the only way to launch a bot process.

    - ``run_dir``: a per-launch folder is made under it holding ``stdout.log``,
      ``stderr.log`` and ``work/`` (the fallback's working directory and HOME; under
      bubblewrap the bot works in a size-limited tmpfs of its own, see ``view``).
    - ``endpoint``: the arena's ZeroMQ endpoint, passed as ``ARENA_ENDPOINT``; for ``ipc://``
      its folder, which must hold only that socket, is made private to the bot and shown to
      its sandbox (``view.link_folders``). ``tcp://`` cannot be reached from bubblewrap's
      network namespace and raises SandboxError. ``token`` becomes ``ARENA_TOKEN``.
    - ``env``: more variables (they win over the manifest's ``env``). The bot gets no other
      variables of the arena's environment.
    - ``args``: appended to the manifest's command (e.g. ``--endpoint``/``--token`` flags).
    - ``expose``: more existing folders to show read-only at their own path.
    - ``sandbox``: ``auto`` (default), ``bwrap`` (required) or ``fallback`` (process group and
      rlimits only; forced).

    The launch gets a control group of this process's run (``cgroups.current_run()``) with
    ``limits``' pids, memory and CPU figures, and is recorded in ``run_dir/.runs/`` so that a
    later run can end it if this one is killed; every process of it carries the run's id in
    ``ARENA_RUN``. ``pinned``: the group holds it to the cores of this process's slot
    (``cores.own_cores``; meant for a bot that serves one game at a time).

    Raises SandboxError (an ArenaError) when the sandbox cannot be set up; a bot that starts
    and then fails is not an error here: ``poll()``/``exit_description()`` tell.
    """
    limits = limits or Limits()
    mode = resolve_mode(sandbox)
    run_dir = Path(run_dir).absolute()
    exposed = [Path(p).absolute() for p in expose]
    extra = dict(env or {})
    if endpoint is not None:
        extra[ENV_ENDPOINT] = endpoint
        exposed.extend(link_folders(endpoint, mode))
    if token is not None:
        extra[ENV_TOKEN] = token
    run = cgroups.current_run()
    extra[cgroups.ENV_RUN] = run.run_id
    for path in (manifest.bot_dir, *exposed):
        if not path.is_dir():
            raise SandboxError(f"cannot expose {path} to bot {manifest.name}: not a folder")

    view = None
    if mode is SandboxMode.BWRAP:
        view = sandbox_view(manifest, limits=limits, shown=exposed, keep_out=[run_dir], env=clean_env(
            home=SANDBOX_WORKDIR, manifest_env=manifest.env, extra=extra, sandboxed=True))

    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        group = run.new_bot(manifest.name, limits.cgroup_limits(own_cores(limits.cpus) if pinned else None))
    except CgroupError as exc:
        raise SandboxError(f"cannot make the control group of bot {manifest.name}: {exc}") from exc
    try:
        return _launch(manifest, run_dir, mode, limits, view, extra, args, keep_workdir, group,
                       run.run_id)
    except BaseException:
        if group is not None:
            group.remove()
        raise


def _launch(manifest: Manifest, run_dir: Path, mode: SandboxMode, limits: Limits,
            view: SandboxView | None, extra: dict[str, str], args: Sequence[str], keep_workdir: bool,
            group: BotCgroup | None, run_id: str) -> BotProcess:
    """``start_bot`` once the checks are done and the control group (if any) exists."""
    launch_dir = Path(tempfile.mkdtemp(prefix=f"{_slug(manifest.name)}-", dir=run_dir))
    workdir = launch_dir / WORKDIR_NAME
    workdir.mkdir(mode=0o700)
    bot_env = dict(view.env) if view else clean_env(home=str(workdir), manifest_env=manifest.env,
                                                    extra=extra)
    command = prefix_command(limits, [*manifest.argv(), *args],
                             pdeathsig=mode is SandboxMode.FALLBACK)
    budget = logsink.LogBudget(run_dir, f"{manifest.name}-{manifest.version}", limits.log_bytes or 1 << 62)
    try:
        out_log, out_fd = logsink.open_stream(launch_dir / STDOUT_LOG, budget)
        err_log, err_fd = logsink.open_stream(launch_dir / STDERR_LOG, budget)
    except OSError as exc:
        shutil.rmtree(launch_dir, ignore_errors=True)
        raise SandboxError(f"cannot open the logs of bot {manifest.name}: {exc}") from exc
    info_r = info_w = -1
    data_fds: list[int] = []
    try:
        pass_fds: tuple[int, ...] = ()
        stdin: int = subprocess.DEVNULL
        if view is not None:
            bwrap, _ = bwrap_status()
            assert bwrap is not None
            info_r, info_w = os.pipe()
            stdin = _guard_fd()
            head, data_fds = bwrap_argv(view, bwrap=bwrap, info_fd=info_w)
            command = head + ["/bin/sh", "-c", GUARD_SCRIPT, "arena-guard", *command]
            pass_fds = (info_w, *data_fds)
        if group is not None:
            command = [*group.join_prefix(), *command]
        popen = _launcher().submit(
            subprocess.Popen, command, stdin=stdin, stdout=out_fd,
            stderr=err_fd, env=bot_env, cwd=workdir, start_new_session=True, close_fds=True,
            pass_fds=pass_fds).result()
    except OSError as exc:
        _close_fds(info_r, info_w)
        for stream in (out_log, err_log):
            stream.finish(0.0)
        shutil.rmtree(launch_dir, ignore_errors=True)
        raise SandboxError(f"cannot start bot {manifest.name}: {exc}") from exc
    finally:
        _close_fds(out_fd, err_fd, *data_fds)
    cgroups.record_launch(run_dir, run_id, popen.pid, group)
    bot = BotProcess(manifest=manifest, popen=popen, mode=mode, launch_dir=launch_dir,
                     limits=limits, init_pid=None, init_pidfd=None, keep_workdir=keep_workdir,
                     cgroup=group, logs=(out_log, err_log))
    bot.view = view
    if mode is SandboxMode.BWRAP:
        os.close(info_w)
        try:  # keep the read end open until bwrap is known or dead: a write to a closed
            # pipe would kill bwrap with SIGPIPE and orphan its half-made sandbox
            bot._attach_init(_read_child_pid(info_r, INFO_TIMEOUT_S))
            if bot._init_pid is None:
                tail = tail_file(bot.stderr_path, max_lines=5)
                bot.close()
                raise SandboxError(f"bubblewrap did not start bot {manifest.name}: "
                                   f"{bot.exit_description()}: {tail}")
        except BaseException:
            bot.close()
            raise
        finally:
            os.close(info_r)
    log.info("started bot %s %s pid=%d sandbox=%s dir=%s", manifest.name, manifest.version,
             popen.pid, mode.value, launch_dir)
    return bot


_launcher_pool: ThreadPoolExecutor | None = None
_launcher_lock = threading.Lock()

# Inside the sandbox (its own PID namespace) the bot runs under a tiny shell, pid 2 under
# bwrap's init. When the bot exits, the shell kills whatever the bot left in the namespace
# (``kill -9 -1`` reaches every process there but the caller and the init) and exits with the
# bot's status, so the init and the outer bwrap end too. A watcher waits for end-of-file on a
# pipe (the shell's standard input) whose only write end the launching process holds: if that
# process dies, even by SIGKILL and at any moment of the launch, the watcher kills everything
# in the namespace. This replaces bwrap's --die-with-parent, which the outer bwrap arms before
# its sandbox child is released: a parent killed in between left that child blocked forever.
# The shell's own messages go to /dev/null, never to the bot's capped log; the bot gets
# /dev/null as standard input, as before.
GUARD_SCRIPT = ('exec 3<&0 </dev/null 4>&2 2>/dev/null; "$@" 2>&4 3<&- 4>&- & bot=$!; exec 4>&-; '
                '{ read -r _ <&3; kill -9 -1; } & exec 3<&-; wait "$bot"; status=$?; kill -9 -1; exit $status')
_guard_pipe: tuple[int, int] | None = None


def _is_guard(pid: int) -> bool:
    """Whether ``pid`` runs ``GUARD_SCRIPT`` (the guard shell or its forked watcher)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return GUARD_SCRIPT.encode() in fh.read()
    except OSError:
        return False


def _guard_fd() -> int:
    """The read end of this process's guard pipe (made once; the write end is never shared)."""
    global _guard_pipe
    with _launcher_lock:
        if _guard_pipe is None:
            _guard_pipe = os.pipe()  # both ends close-on-exec; only the read end is passed on
        return _guard_pipe[0]


def _launcher() -> ThreadPoolExecutor:
    """This process's one long-lived thread that forks every bot.

    The fallback's ``setpriv --pdeathsig`` fires when the *thread* that forked the process
    ends, not the process; forking from a thread that lives as long as the process means a
    bot never dies just because the caller's thread finished. A pool worker's own threads are
    held to one core (``cores.pin_to_slot``); this one, and so the bots, are not.
    """
    global _launcher_pool
    with _launcher_lock:
        if _launcher_pool is None:
            _launcher_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="botproc-launcher",
                                                initializer=unpin_thread)
        return _launcher_pool


def _forget_launcher_after_fork() -> None:
    """A forked child has no launcher thread (only the forking thread survives a fork), and
    must not keep its parent's guard pipe open: it makes its own."""
    global _launcher_pool, _launcher_lock, _guard_pipe
    _launcher_pool = None
    _launcher_lock = threading.Lock()
    if _guard_pipe is not None:
        _close_fds(*_guard_pipe)
        _guard_pipe = None


os.register_at_fork(after_in_child=_forget_launcher_after_fork)


def _read_child_pid(fd: int, timeout: float) -> int | None:
    """Read bwrap's ``--info-fd`` JSON until EOF (deadline-bound); its ``child-pid``."""
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            log.error("bwrap wrote no sandbox info within %.1f s", timeout)
            return None
        # poll, not select: a connection flood can push the arena's descriptors past
        # select()'s FD_SETSIZE ("filedescriptor out of range in select()")
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(remaining * 1000.0):
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    try:
        pid = json.loads(data)["child-pid"]
    except (ValueError, KeyError, TypeError):
        return None
    return pid if isinstance(pid, int) else None


def tail_file(path: Path, *, max_lines: int = 20, max_bytes: int = 4096) -> str:
    """The last ``max_lines`` lines within the last ``max_bytes`` bytes of a file ('' if none)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - max_bytes))
            data = fh.read(max_bytes)
    except OSError:
        return ""
    lines = data.decode("utf-8", "replace").splitlines()
    if size > max_bytes and lines:
        lines = lines[1:]  # the first line is probably cut
    return "\n".join(lines[-max_lines:]) if max_lines > 0 else ""


def _close_fds(*fds: int) -> None:
    for fd in fds:
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"


def _mib(n: int | None) -> str:
    return "unlimited" if n is None else f"{n / (1 << 20):g} MiB"


def _slug(name: str) -> str:
    return _SLUG.sub("_", name)[:40] or "bot"
