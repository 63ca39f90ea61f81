"""What a bot sees inside its bubblewrap sandbox: the mounts, the uid, the environment.

:func:`sandbox_view` builds one :class:`SandboxView` per launch; ``start_bot`` turns it into
bwrap's arguments and ``arena validate`` prints it. Nothing of the host is visible unless it is
listed here:

- the system runtime read-only: ``/usr`` and the ``/bin``, ``/sbin``, ``/lib*`` links or
  folders; from ``/etc`` only the loader's files (``ld.so.cache``, ``ld.so.conf*``), the
  ``alternatives`` links and ``localtime``, plus ``passwd``, ``group``, ``nsswitch.conf`` and
  ``hosts`` written for the sandbox (no secrets: no ``shadow``, no keys);
- the interpreter: the prefix of the arena's Python (a virtual environment) and the base
  installation it points to, read-only, but not the project checkout around them (the
  arena's own editable-install hook, if any, is shown empty);
- the SDK under :data:`SDK_ROOT`, on ``PYTHONPATH``: the ``protocol``, ``botkit`` and
  ``arena.engine`` package folders, read-only, with an ``arena/__init__.py`` that imports
  nothing, so ``import arena.engine`` needs no other part of the arena;
- the bot's own folder and the manifest's ``extra_paths``, read-only at their own paths;
- its link folder (the ``ipc://`` socket's folder, private to this bot), read-only;
- a private ``/tmp``: a tmpfs of ``Limits.disk_bytes`` minus :data:`SHM_BYTES`, in which
  :data:`SANDBOX_WORKDIR` is the working directory, ``HOME`` and ``TMPDIR``; a ``/dev`` of
  device nodes only (read-only) with a ``/dev/shm`` tmpfs of :data:`SHM_BYTES`: the bot's
  writes are bounded in total by ``Limits.disk_bytes``;
- its own ``/proc`` (its own PID namespace), no network, IPC or UTS of the host.

Everything else is read-only (the root itself is remounted read-only). The bot runs as
:data:`BOT_UID`: an arena running as root drops to it with ``setpriv`` (no capabilities, an
empty bounding set, no new privileges); any other user maps it in a user namespace.
"""

from __future__ import annotations

import enum
import importlib.util
import os
import site
import sys
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from arena.botproc.manifest import EXTRA_PATH_ROOTS, Manifest
from arena.botproc.sandbox import (
    BOT_UID, ROOT_CAPS, SANDBOX_WORKDIR, SDK_ROOT, Limits, SandboxError, SandboxMode, drop_root,
)
SDK_PACKAGES = ("protocol", "botkit", "arena.engine")
"""The project packages a bot may import; all other project code stays outside."""
SHM_BYTES = 1 << 20
"""Size of the sandbox's ``/dev/shm`` (POSIX semaphores need one; data does not fit)."""
ARENA_STUB = b'"""Inside a bot\'s sandbox only ``arena.engine`` of the arena is available."""\n'
"""The ``arena/__init__.py`` bots see: it imports nothing."""
NAMESPACES = ("pid", "net", "ipc", "uts")
EDITABLE_HOOKS = "__editable__.sixty_six_arena-*.pth"
"""The arena's editable-install hook: shown empty, because the checkout it maps packages to is
not there, the SDK comes from ``PYTHONPATH``, and running it costs every Python bot 10-20 ms
of its start (the finder's imports)."""

_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FROM_HOST = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime")
_ETC_WRITTEN = {
    "passwd": f"root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
              f"nobody:x:{BOT_UID}:{BOT_UID}:bot:{SANDBOX_WORKDIR}:/usr/sbin/nologin\n",
    "group": f"root:x:0:\nnogroup:x:{BOT_UID}:\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
    "hosts": "127.0.0.1 localhost\n::1 localhost\n",
}


class MountKind(enum.StrEnum):
    """How one path of the view is made."""

    BIND = "bind"          # a host path, read-only unless ``writable``
    SYMLINK = "symlink"    # a link (``source`` is its text)
    DATA = "data"          # a file written for the sandbox (``data``)
    DIR = "dir"            # an empty folder (a mount point's parent, or the working directory)
    TMPFS = "tmpfs"        # a private, size-limited RAM filesystem
    DEV = "dev"            # device nodes only
    PROC = "proc"          # the PID namespace's own /proc


@dataclass(frozen=True, slots=True)
class Mount:
    """One path of the sandbox's filesystem and why it is there."""

    kind: MountKind
    target: str
    purpose: str
    source: str = ""
    writable: bool = False
    size_bytes: int | None = None
    perms: int | None = None
    data: bytes = field(default=b"", repr=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"target": self.target, "kind": str(self.kind), "source": self.source or None,
                "writable": self.writable, "size_bytes": self.size_bytes,
                "bytes": len(self.data) if self.kind is MountKind.DATA else None,
                "perms": None if self.perms is None else f"{self.perms:04o}",
                "purpose": self.purpose}


@dataclass(frozen=True, slots=True)
class SandboxView:
    """Everything a bot sees: its mounts (parents before children), uid, environment."""

    mounts: tuple[Mount, ...]
    env: Mapping[str, str] = field(hash=False)
    uid: int = BOT_UID
    gid: int = BOT_UID
    workdir: str = SANDBOX_WORKDIR
    namespaces: tuple[str, ...] = NAMESPACES

    @property
    def disk_bytes(self) -> int | None:
        """The most the bot can write in total (None: tmpfs default, half the RAM)."""
        sizes = [m.size_bytes for m in self.mounts if m.kind is MountKind.TMPFS]
        return None if None in sizes else sum(s for s in sizes if s is not None)

    def to_dict(self, *, hide: Iterable[str] = ()) -> dict[str, Any]:
        """JSON-ready form (``arena validate`` prints it); the values of the variables named
        in ``hide`` are masked. Folders made only to lead to a mount are left out."""
        hidden = set(hide)
        return {"uid": self.uid, "gid": self.gid, "workdir": self.workdir,
                "namespaces": list(self.namespaces), "disk_bytes": self.disk_bytes,
                "mounts": [m.to_dict() for m in self.mounts if m.kind is not MountKind.DIR
                           or m.writable],
                "env": {k: "(hidden)" if k in hidden else v for k, v in sorted(self.env.items())}}


def sdk_packages() -> dict[str, Path]:
    """Where each of :data:`SDK_PACKAGES` lives here: its path under the import root
    (``arena/engine``) -> its folder on the host. Packages not installed are left out."""
    found: dict[str, Path] = {}
    for name in SDK_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.submodule_search_locations:
            found[name.replace(".", "/")] = Path(next(iter(spec.submodule_search_locations)))
    return found


def interpreter_paths() -> list[Path]:
    """The folders the arena's interpreter needs: its prefix (a virtual environment), the base
    installation and the real executable's folder, minus those already under ``/usr``."""
    paths = [Path(sys.prefix), Path(sys.base_prefix), Path(os.path.realpath(sys.executable)).parent]
    kept: list[Path] = []
    for path in dict.fromkeys(p.absolute() for p in paths):
        if not _inside(path, Path("/usr")) and not any(_inside(path, k) for k in kept):
            kept = [k for k in kept if not _inside(k, path)] + [path]
    return kept


def editable_hooks() -> list[Path]:
    """The arena's own editable-install hooks (``pip install -e``: a ``.pth`` that imports a
    finder mapping the project's packages to its checkout) in the site-packages of the
    interpreter's folders; none in an ordinary install."""
    shown = interpreter_paths()
    return sorted(hook for folder in site.getsitepackages() for hook in Path(folder).glob(EDITABLE_HOOKS)
                  if any(_inside(hook, p) for p in shown))


def sandbox_view(manifest: Manifest, *, limits: Limits, env: Mapping[str, str],
                 shown: Iterable[Path] = (), keep_out: Iterable[Path] = ()) -> SandboxView:
    """The view of ``manifest``'s bot; ``shown`` are more folders (its link folder) to show
    read-only at their own paths; no extra path may show any of ``keep_out`` (the bots' log
    folder). SandboxError for an extra path that cannot be shown."""
    shown = list(shown)
    mounts = _system() + [
        Mount(MountKind.PROC, "/proc", "own processes only"),
        Mount(MountKind.DEV, "/dev", "device nodes only"),
    ]
    disk = limits.disk_bytes
    shm = None if disk is None else min(SHM_BYTES, disk // 16)
    mounts += [
        Mount(MountKind.TMPFS, "/dev/shm", "shared memory", writable=True, size_bytes=shm,
              perms=0o1777),
        Mount(MountKind.TMPFS, "/tmp", "private /tmp", writable=True,
              size_bytes=None if disk is None or shm is None else disk - shm, perms=0o1777),
        Mount(MountKind.DIR, SANDBOX_WORKDIR, "working directory, HOME and TMPDIR",
              writable=True, perms=0o777),
    ]
    binds = [Mount(MountKind.BIND, str(p), "interpreter", source=str(p))
             for p in interpreter_paths()]
    binds += [Mount(MountKind.DATA, str(hook), "the arena's editable-install hook, emptied", perms=0o444)
              for hook in editable_hooks()]
    binds += [Mount(MountKind.DIR, f"{SDK_ROOT}/arena", "SDK", perms=0o755),
              Mount(MountKind.DATA, f"{SDK_ROOT}/arena/__init__.py", "SDK", data=ARENA_STUB,
                    perms=0o444)]
    binds += [Mount(MountKind.BIND, f"{SDK_ROOT}/{rel}", "SDK", source=str(host))
              for rel, host in sdk_packages().items()]
    binds.append(Mount(MountKind.BIND, str(manifest.bot_dir), "the bot's folder",
                       source=str(manifest.bot_dir)))
    binds += [Mount(MountKind.BIND, path, "extra path in bot.toml", source=path)
              for path in _extra_paths(manifest, [*keep_out, *shown])]
    binds += [Mount(MountKind.BIND, str(p), "private link folder", source=str(p))
              for p in shown]
    return SandboxView(mounts=tuple(mounts + _with_parents(mounts, binds)),
                       env=types.MappingProxyType(dict(env)))


def _system() -> list[Mount]:
    mounts: list[Mount] = []
    for path in _SYSTEM_DIRS:
        mounts += _host(path, "system runtime")
    mounts.append(Mount(MountKind.DIR, "/etc", "system configuration", perms=0o755))
    for name in _ETC_FROM_HOST:
        mounts += _host(f"/etc/{name}", "loader and runtime configuration")
    mounts += [Mount(MountKind.DATA, f"/etc/{name}", "user and name lookups",
                     data=text.encode(), perms=0o444) for name, text in _ETC_WRITTEN.items()]
    return mounts


def _host(path: str, purpose: str) -> list[Mount]:
    """``path`` as on the host: the same link, or the folder or file bound read-only."""
    if os.path.islink(path):
        return [Mount(MountKind.SYMLINK, path, purpose, source=os.readlink(path))]
    if os.path.exists(path):
        return [Mount(MountKind.BIND, path, purpose, source=path)]
    return []


def _extra_paths(manifest: Manifest, keep_out: Iterable[Path]) -> list[str]:
    """The manifest's extra paths, each checked again on this host: it exists; what it resolves
    to is still below an allowed root (a symlink cannot lead elsewhere); it holds none of the
    project or interpreter folders the sandbox shows only in part, and neither holds nor lies in
    a folder of ``keep_out`` (the bots' logs, its link folder)."""
    if not manifest.extra_paths:
        return []
    roots = [Path(r) for r in EXTRA_PATH_ROOTS]
    partial = (*sdk_packages().values(), *interpreter_paths())
    private = [p.absolute() for p in keep_out]
    for path in manifest.extra_paths:
        real = Path(os.path.realpath(path))
        where = f"bot {manifest.name}: extra path {path} (bot.toml)"
        if not real.exists():
            raise SandboxError(f"{where} does not exist on this host; install what the bot needs there")
        if not any(_inside(real, r) and real != r for r in roots):
            raise SandboxError(f"{where} leads to {real}, not below {', '.join(EXTRA_PATH_ROOTS)}")
        for folder in (*partial, *private):
            if _inside(folder, real) or (folder in private and _inside(real, folder)):
                raise SandboxError(f"{where} would show {folder}, which is not the bot's to see")
    return list(manifest.extra_paths)


def _with_parents(base: list[Mount], binds: list[Mount]) -> list[Mount]:
    """``binds`` ordered parents first, each preceded by the folders that lead to it (mode
    0755: bubblewrap would make them 0700, and the bot could not reach what is inside).
    A folder inside a host folder already shown exists there and is not made."""
    # Paths as normalised strings: "inside a shown folder" is a prefix test (a few ms a launch
    # less than comparing PurePosixPath parents).
    made = {str(PurePosixPath(m.target)) for m in base} | {"/"}
    shown = [str(PurePosixPath(m.target)) + "/" for m in base if m.kind is MountKind.BIND]
    out: list[Mount] = []
    for mount in sorted(binds, key=lambda m: len(PurePosixPath(m.target).parts)):
        target = PurePosixPath(mount.target)
        for parent in map(str, reversed(target.parents)):
            if parent in made or any(parent.startswith(s) for s in shown):
                continue
            out.append(Mount(MountKind.DIR, parent, "path to a mount", perms=0o755))
            made.add(parent)
        out.append(mount)
        made.add(str(target))
        if mount.kind is MountKind.BIND:
            shown.append(f"{target}/")
    return out


def bwrap_argv(view: SandboxView, *, bwrap: str, info_fd: int,
               as_root: bool | None = None) -> tuple[list[str], list[int]]:
    """bwrap's arguments for ``view``, through the uid switch, ending with ``--``; and the
    descriptors to pass on (the written files, as pipes: close them after the launch)."""
    root = os.geteuid() == 0 if as_root is None else as_root
    argv = [bwrap, *(f"--unshare-{ns}" for ns in view.namespaces), "--new-session",
            "--info-fd", str(info_fd)]
    if root:  # no user namespace: the bot gets a real unprivileged uid on the host
        argv += ROOT_CAPS
    else:
        argv += ["--unshare-user", "--uid", str(view.uid), "--gid", str(view.gid)]
    fds: list[int] = []
    try:
        for mount in view.mounts:
            argv += _mount_args(mount, fds)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", view.workdir, "--"]
    if root:
        argv += drop_root(view.uid, view.gid)
    return argv, fds


def _mount_args(mount: Mount, fds: list[int]) -> list[str]:
    perms = ["--perms", f"{mount.perms:04o}"] if mount.perms is not None else []
    match mount.kind:
        case MountKind.BIND:
            return ["--bind" if mount.writable else "--ro-bind", mount.source, mount.target]
        case MountKind.SYMLINK:
            return ["--symlink", mount.source, mount.target]
        case MountKind.DIR:
            return [*perms, "--dir", mount.target]
        case MountKind.TMPFS:
            size = ["--size", str(mount.size_bytes)] if mount.size_bytes is not None else []
            return [*perms, *size, "--tmpfs", mount.target]
        case MountKind.DEV:
            return ["--dev", mount.target]
        case MountKind.PROC:
            return ["--proc", mount.target]
        case MountKind.DATA:
            read, write = os.pipe()
            fds.append(read)
            with os.fdopen(write, "wb") as fh:  # small files: they fit in the pipe's buffer
                fh.write(mount.data)
            return [*perms, "--ro-bind-data", str(read), mount.target]
    raise AssertionError(mount.kind)


def link_folders(endpoint: str, mode: SandboxMode, *, as_root: bool | None = None) -> list[Path]:
    """The folder to show for an ``ipc://`` endpoint, made private to the bot: mode 0700 and,
    when the arena is root, owned by :data:`BOT_UID` with the socket. SandboxError if the bot
    could not reach ``endpoint`` from its sandbox, or if the folder holds anything but the
    socket (it is shown to the bot: one folder per bot)."""
    if endpoint.startswith("ipc://"):
        path = endpoint[len("ipc://"):]
        if path.startswith("@"):
            if mode is SandboxMode.BWRAP:
                raise SandboxError(f"endpoint {endpoint!r}: abstract sockets belong to a network "
                                   "namespace and are unreachable from the sandbox; use a path")
            return []
        if not os.path.isabs(path):
            raise SandboxError(f"endpoint {endpoint!r}: the ipc path must be absolute (the bot "
                               "runs in another working directory)")
        if mode is not SandboxMode.BWRAP:
            return [Path(path).parent]
        return [_private_link_folder(Path(path), os.geteuid() == 0 if as_root is None else as_root)]
    if mode is SandboxMode.BWRAP:
        raise SandboxError(f"endpoint {endpoint!r} is unreachable from the sandbox's own "
                           "network namespace; bots must connect over ipc://")
    return []


def _private_link_folder(socket: Path, root: bool) -> Path:
    folder = socket.parent
    try:
        others = sorted(set(os.listdir(folder)) - {socket.name})
    except OSError as exc:
        raise SandboxError(f"cannot show the link folder {folder} to the bot: {exc}") from None
    if others:
        raise SandboxError(f"the link folder {folder} holds {', '.join(others)} besides the "
                           f"socket {socket.name}; each bot needs a folder of its own")
    folder.chmod(0o700)
    if root:
        for path in (folder, socket):
            if path.exists():
                os.chown(path, BOT_UID, BOT_UID, follow_symlinks=False)
    return folder


def make_link_folder(parent: Path, name: str) -> Path:
    """A fresh folder ``parent/name`` (mode 0700) for one bot's ``ipc://`` socket."""
    folder = parent / name
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
