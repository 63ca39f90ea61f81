"""The sandbox view: what a bot is shown, in what order, with what limits (bwrap's arguments)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from arena.botproc import Limits, ManifestError, SandboxError, SandboxMode, load_manifest, view
from arena.botproc.sandbox import BOT_UID, SANDBOX_WORKDIR, SDK_ROOT
from arena.botproc.view import MountKind, SandboxView
from arena.validation.report import view_lines

pytestmark = pytest.mark.unit


def bot(folder: Path, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(f'name = "b"\nversion = "1"\nprotocol = "1"\n'
                                     f'command = ["{{python}}", "bot.py"]\n{extra}')
    return folder


def make_view(folder: Path, monkeypatch: pytest.MonkeyPatch | None = None, *,
              checkout: Path | None = None, limits: Limits | None = None,
              shown: tuple[Path, ...] = ()) -> SandboxView:
    if monkeypatch is not None and checkout is not None:  # a checkout elsewhere, venv inside it
        monkeypatch.setattr(view, "interpreter_paths", lambda: [checkout / ".venv"])
        monkeypatch.setattr(view, "sdk_packages", lambda: {
            "protocol": checkout / "protocol", "botkit": checkout / "botkit",
            "arena/engine": checkout / "arena" / "engine"})
    return view.sandbox_view(load_manifest(folder), limits=limits or Limits(), env={"A": "1"},
                             shown=shown)


def targets(v: SandboxView, kind: MountKind | None = None) -> list[str]:
    return [m.target for m in v.mounts if kind is None or m.kind is kind]


def test_a_checkout_under_tmp_shows_its_interpreter_and_sdk_but_not_the_checkout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkout = Path("/tmp/ci-clone")
    v = make_view(bot(tmp_path / "bot"), monkeypatch, checkout=checkout)
    order = targets(v)
    assert order.index("/tmp/ci-clone/.venv") > order.index("/tmp")  # over the private /tmp
    binds = {m.target: m.source for m in v.mounts if m.kind is MountKind.BIND}
    assert str(checkout) not in binds and not any(s == str(checkout) for s in binds.values())
    assert binds[f"{SDK_ROOT}/arena/engine"] == "/tmp/ci-clone/arena/engine"
    assert binds[f"{SDK_ROOT}/protocol"] == "/tmp/ci-clone/protocol"
    stub = next(m for m in v.mounts if m.target == f"{SDK_ROOT}/arena/__init__.py")
    assert stub.kind is MountKind.DATA  # imports nothing: arena.engine needs no other module
    assert not [n for n in ast.walk(ast.parse(stub.data)) if isinstance(n, (ast.Import, ast.ImportFrom))]
    # the folders leading to a mount are made 0755 (bubblewrap would make them 0700)
    made = {m.target: m.perms for m in v.mounts if m.kind is MountKind.DIR}
    assert made["/tmp/ci-clone"] == 0o755 and made[SDK_ROOT] == 0o755


def test_only_the_system_and_loader_files_of_the_host(tmp_path: Path) -> None:
    v = make_view(bot(tmp_path / "bot"))
    host = [m.source for m in v.mounts if m.kind is MountKind.BIND]
    assert "/" not in host and "/etc" not in host and "/home" not in host and "/root" not in host
    etc = [t for t in targets(v) if t.startswith("/etc/")]
    assert {"/etc/passwd", "/etc/group"} <= set(etc) and "/etc/shadow" not in etc
    passwd = next(m for m in v.mounts if m.target == "/etc/passwd")
    assert passwd.kind is MountKind.DATA and f":{BOT_UID}:{BOT_UID}:".encode() in passwd.data
    assert v.uid == v.gid == BOT_UID


def test_writes_are_bounded_in_total(tmp_path: Path) -> None:
    v = make_view(bot(tmp_path / "bot"), limits=Limits(disk_bytes=32 << 20))
    sizes = {m.target: m.size_bytes for m in v.mounts if m.kind is MountKind.TMPFS}
    assert set(sizes) == {"/tmp", "/dev/shm"}
    assert sizes["/dev/shm"] == 1 << 20 and v.disk_bytes == 32 << 20
    writable = {m.target for m in v.mounts if m.writable}
    assert writable == {"/tmp", "/dev/shm", SANDBOX_WORKDIR}
    assert SANDBOX_WORKDIR.startswith("/tmp/")  # the working directory counts in /tmp


def test_bwrap_arguments_drop_root_or_map_the_uid(tmp_path: Path) -> None:
    v = make_view(bot(tmp_path / "bot"))
    as_root, fds = view.bwrap_argv(v, bwrap="bwrap", info_fd=9, as_root=True)
    for fd in fds:
        os.close(fd)
    tail = as_root[as_root.index("--") + 1:]
    assert tail[0].endswith("setpriv") and f"--reuid={BOT_UID}" in tail
    assert "--bounding-set=-all" in tail and "--no-new-privs" in tail and tail[-1] == "--"
    assert as_root[as_root.index("--cap-drop") + 1] == "ALL" and "--unshare-user" not in as_root
    assert as_root.index("--remount-ro") > as_root.index("--ro-bind")  # everything else read-only
    user, fds = view.bwrap_argv(v, bwrap="bwrap", info_fd=9, as_root=False)
    for fd in fds:
        os.close(fd)
    assert user[user.index("--uid") + 1] == str(BOT_UID) and "--unshare-user" in user
    assert user[-1] == "--" and "setpriv" not in " ".join(user)
    assert len(fds) == sum(m.kind is MountKind.DATA for m in v.mounts)


def test_the_report_form_lists_every_mount_and_hides_secrets(tmp_path: Path) -> None:
    v = make_view(bot(tmp_path / "bot"))
    data = v.to_dict(hide=("A",))
    assert data["uid"] == BOT_UID and data["env"] == {"A": "(hidden)"}
    assert {m["target"] for m in data["mounts"]} >= {"/usr", "/tmp", str(tmp_path / "bot")}
    text = "\n".join(view_lines(data))
    assert f"uid {BOT_UID}" in text and "64 MiB in total" in text and "A=(hidden)" in text
    assert "rw  /dev/shm  tmpfs, at most 1 MiB, mode 1777" in text
    assert "not a security boundary" in view_lines(None)[0]  # the fallback says what it is


@pytest.mark.parametrize(("value", "message"), [
    ('"/opt/x"', "must be a list"),
    ('["opt/x"]', "absolute, normalised"),
    ('["/opt/../etc"]', "absolute, normalised"),
    ('["/opt/x/"]', "absolute, normalised"),
    ('["/etc"]', "not a folder or file below /opt"),
    ('["/opt"]', "not a folder or file below /opt"),
    ('["/home/alice/julia"]', "not a folder or file below /opt"),
    ('[3]', "must be strings"),
])
def test_extra_paths_are_checked_at_load(tmp_path: Path, value: str, message: str) -> None:
    with pytest.raises(ManifestError, match=message) as info:
        load_manifest(bot(tmp_path / "bot", f"extra_paths = {value}\n"))
    assert info.value.field == "extra_paths"


@pytest.mark.requires("root")
def test_extra_paths_are_shown_read_only_and_checked_again_at_launch(tmp_path: Path) -> None:
    runtime = Path("/opt") / f"arena-test-runtime-{os.getpid()}"
    runtime.mkdir()
    try:
        v = make_view(bot(tmp_path / "bot", f'extra_paths = ["{runtime}"]\n'))
        mount = next(m for m in v.mounts if m.target == str(runtime))
        assert mount.kind is MountKind.BIND and not mount.writable
        with pytest.raises(SandboxError, match=f"would show {runtime / 'logs'}, which is not the bot's"):
            view.sandbox_view(load_manifest(tmp_path / "bot"), limits=Limits(), env={},
                              keep_out=[runtime / "logs"])  # e.g. the bots' logs kept under it
        runtime.rmdir()
        runtime.symlink_to("/root")  # a link that leads outside the allowed roots
        with pytest.raises(SandboxError, match="leads to /root"):
            make_view(tmp_path / "bot")
    finally:
        if runtime.is_symlink():
            runtime.unlink()
        elif runtime.exists():
            runtime.rmdir()
    with pytest.raises(SandboxError, match="does not exist on this host"):
        make_view(tmp_path / "bot")


def test_a_link_folder_must_be_the_bots_alone(tmp_path: Path) -> None:
    folder = view.make_link_folder(tmp_path, "1")
    (folder / "link.sock").touch()
    shown = view.link_folders(f"ipc://{folder}/link.sock", SandboxMode.BWRAP)
    assert shown == [folder] and (folder.stat().st_mode & 0o777) == 0o700
    if os.geteuid() == 0:
        assert folder.stat().st_uid == BOT_UID and (folder / "link.sock").stat().st_uid == BOT_UID
    (folder / "other.sock").touch()
    with pytest.raises(SandboxError, match="holds other.sock besides the socket link.sock"):
        view.link_folders(f"ipc://{folder}/link.sock", SandboxMode.BWRAP)
