"""arena.botproc with real processes: manifests, the sandbox, limits, and killing everything.

Waits poll for a condition with a deadline; nothing sleeps hoping a race goes away.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import zmq

from arena.botproc import (
    SANDBOX_WORKDIR, BotProcess, Limits, Manifest, ManifestError, SandboxError, SandboxMode,
    fingerprint, load_manifest, start_bot,
)
from arena.botproc import procfs, process, sandbox, view
from arena.errors import ArenaError

from .conftest import BOTFIXTURES

needs_bwrap = pytest.mark.requires("bubblewrap")
MODES = [pytest.param("bwrap", marks=needs_bwrap), "fallback"]
SCRIPTS = Path(__file__).parent / "scripts"


def wait_until(condition: Callable[[], object], timeout: float = 10.0) -> bool:
    """Poll ``condition`` every few ms until it is true or ``timeout`` s have passed."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)


def reap(pid: int, timeout: float) -> int | None:
    """waitpid with a deadline: the child's exit code, or None if it is still running."""
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.005)


def make_bot(folder: Path, body: str, files: dict[str, str] | None = None) -> Path:
    """Write a bot folder with ``bot.toml`` = ``body`` (plus files); return the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text(body)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


def shell_bot(tmp_path: Path, script: str, name: str = "sh") -> Manifest:
    body = f'name = "{name}"\nversion = "1"\nprotocol = "1"\ncommand = ["sh", "-c", {json.dumps(script)}]\n'
    return load_manifest(make_bot(tmp_path / name, body))


def fixture(name: str) -> Manifest:
    return load_manifest(BOTFIXTURES / name)


def wait_ready(bot: BotProcess, lines: tuple[str, ...] = ("ready",)) -> None:
    def ready() -> bool:
        if bot.poll() is not None:
            pytest.fail(f"bot exited early: {bot.exit_description()}\n{bot.stderr_tail()}")
        out = bot.stdout_tail(max_lines=50)
        return all(line in out for line in lines)
    assert wait_until(ready), f"bot not ready: {bot.stdout_tail()!r} {bot.stderr_tail()!r}"


# -- (i) manifests ---------------------------------------------------------------------------

GOOD = 'name = "b"\nversion = "1.0"\nprotocol = "1"\ncommand = ["{python}", "bot.py"]\n'


@pytest.mark.unit
def test_manifest_loads_and_resolves_the_command(tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "b", GOOD + 'max_games = 4\n[env]\nSEED = "7"\n',
                      {"bot.py": "print(1)\n"})
    m = load_manifest(folder)
    assert (m.name, m.version, m.protocol, m.max_games) == ("b", "1.0", "1", 4)
    assert m.command == ("{python}", "bot.py")
    assert dict(m.env) == {"SEED": "7"}
    assert m.bot_dir == folder.resolve() and m.path == folder.resolve() / "bot.toml"
    assert m.argv() == [sys.executable, str(folder.resolve() / "bot.py")]
    assert load_manifest(folder / "bot.toml") == m
    with pytest.raises(AttributeError):
        m.name = "other"  # type: ignore[misc]


@pytest.mark.unit
def test_manifest_argv_leaves_non_paths_alone(tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "b", GOOD.replace(
        '["{python}", "bot.py"]',
        '["{python}", "-m", "mybot", "--opt={python}", "./run.sh", "data/w.bin", "x"]'))
    (folder / "data").mkdir()
    (folder / "data" / "w.bin").write_text("")
    argv = load_manifest(folder).argv(python="/py")
    root = str(folder.resolve())
    assert argv == ["/py", "-m", "mybot", "--opt=/py", f"{root}/run.sh", f"{root}/data/w.bin", "x"]


@pytest.mark.unit
def test_manifest_protocol_may_be_an_integer(tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "b", GOOD.replace('protocol = "1"', "protocol = 1"))
    assert load_manifest(folder).protocol == "1"
    assert load_manifest(folder).max_games == 1  # the default


@pytest.mark.unit
@pytest.mark.parametrize("body, field, words", [
    (GOOD.replace('name = "b"\n', ""), "name", "missing"),
    (GOOD.replace('name = "b"', "name = 7"), "name", "must be a string, got an integer"),
    (GOOD.replace('version = "1.0"', "version = 1.0"), "version", "must be a string, got a float"),
    (GOOD.replace('name = "b"', 'name = "  "'), "name", "must not be empty"),
    (GOOD.replace('name = "b"', f'name = "{"x" * 65}"'), "name", "at most 64 characters"),
    (GOOD.replace('["{python}", "bot.py"]', '"python bot.py"'), "command", "non-empty list"),
    (GOOD.replace('["{python}", "bot.py"]', "[]"), "command", "empty list"),
    (GOOD.replace('["{python}", "bot.py"]', '["{python}", 3]'), "command", "item 1"),
    (GOOD.replace('protocol = "1"', "protocol = true"), "protocol", "got a boolean"),
    (GOOD.replace('protocol = "1"', 'protocol = "2"'), "protocol", "'2' is not supported: this arena speaks protocol 1.x"),
    (GOOD.replace('protocol = "1"', "protocol = 0"), "protocol", "'0' is not supported"),
    (GOOD + "max_games = 0\n", "max_games", "integer >= 1"),
    (GOOD + "max_games = true\n", "max_games", "integer >= 1"),
    (GOOD + 'max_games = "2"\n', "max_games", "integer >= 1"),
    (GOOD + 'env = "A=1"\n', "env", "table"),
    (GOOD + "[env]\nA = 1\n", "env", "'A' must be a string"),
    (GOOD + '[env]\n"1BAD" = "x"\n', "env", "not a valid variable name"),
    (GOOD + 'comand = ["x"]\n', "comand", "unknown key"),
])
def test_manifest_errors_name_the_file_and_the_field(tmp_path: Path, body: str, field: str,
                                                      words: str) -> None:
    folder = make_bot(tmp_path / "b", body)
    with pytest.raises(ManifestError) as info:
        load_manifest(folder)
    message = str(info.value)
    assert str(folder / "bot.toml") in message
    assert f"field {field!r}" in message and words in message
    assert info.value.field == field and isinstance(info.value, ArenaError)


@pytest.mark.unit
def test_manifest_errors_for_missing_or_broken_files(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no such bot folder"):
        load_manifest(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ManifestError, match=r"empty/bot\.toml: missing"):
        load_manifest(tmp_path / "empty")
    make_bot(tmp_path / "bad", 'name = "b"\nversion = \n')
    with pytest.raises(ManifestError, match=r"bad/bot\.toml: not valid TOML: .*line 2"):
        load_manifest(tmp_path / "bad")
    (tmp_path / "binary").mkdir()
    (tmp_path / "binary" / "bot.toml").write_bytes(b"name = \"\xff\"\n")
    with pytest.raises(ManifestError, match="not valid TOML"):
        load_manifest(tmp_path / "binary")


@pytest.mark.unit
def test_fingerprint_covers_names_and_contents_but_not_pycache(tmp_path: Path) -> None:
    folder = make_bot(tmp_path / "b", GOOD, {"bot.py": "print(1)\n"})
    first = fingerprint(folder)
    assert len(first) == 64 and first == fingerprint(folder)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "bot.cpython-311.pyc").write_bytes(b"junk")
    assert fingerprint(folder) == first
    (folder / "bot.py").write_text("print(2)\n")
    second = fingerprint(folder)
    assert second != first
    (folder / "bot.py").rename(folder / "other.py")
    assert fingerprint(folder) != second
    (folder / "sub").mkdir()
    (folder / "sub" / "x").write_text("")
    assert fingerprint(folder) != second
    with pytest.raises(ManifestError):
        fingerprint(tmp_path / "nowhere")


@pytest.mark.unit
def test_limits_check_their_values() -> None:
    assert Limits(cpu_seconds=5, address_space_bytes=None).prlimit_args() == [
        "--core=0", "--cpu=5:6", "--nofile=256", f"--fsize={16 << 20}"]
    with pytest.raises(ValueError, match="open_files"):
        Limits(open_files=0)


# -- sandbox selection -------------------------------------------------------------------------

def test_auto_falls_back_loudly_once_without_bwrap(monkeypatch: pytest.MonkeyPatch,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(sandbox, "bwrap_status", lambda: (None, "bubblewrap (bwrap) is not installed"))
    monkeypatch.setattr(sandbox, "_warned_fallback", False)
    with caplog.at_level(logging.WARNING, logger="arena.botproc.sandbox"):
        assert sandbox.resolve_mode("auto") is SandboxMode.FALLBACK
        assert sandbox.resolve_mode("auto") is SandboxMode.FALLBACK
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "WITHOUT a sandbox" in warnings[0].getMessage()
    assert "NOT a security boundary" in warnings[0].getMessage()
    with pytest.raises(SandboxError, match="'bwrap' requested but bubblewrap"):
        sandbox.resolve_mode("bwrap")
    with pytest.raises(SandboxError, match="unknown sandbox mode"):
        sandbox.resolve_mode("docker")
    assert sandbox.resolve_mode("fallback") is SandboxMode.FALLBACK


@needs_bwrap
def test_auto_uses_bwrap_when_it_works() -> None:
    assert sandbox.resolve_mode("auto") is SandboxMode.BWRAP


@needs_bwrap
@pytest.mark.parametrize("endpoint, words", [
    ("tcp://127.0.0.1:5555", "bots must connect over ipc://"),
    ("ipc://@arena", "abstract sockets"),
    ("ipc://relative/arena.sock", "must be absolute"),
])
def test_unreachable_endpoints_are_refused_with_bwrap(tmp_path: Path, endpoint: str,
                                                      words: str) -> None:
    with pytest.raises(SandboxError, match=words):
        start_bot(fixture("sleeper"), run_dir=tmp_path, endpoint=endpoint, sandbox="bwrap")
    assert not list(tmp_path.iterdir())


@needs_bwrap
@pytest.mark.integration
def test_a_sandbox_that_reports_no_child_is_killed_and_raised(
        tmp_path: Path, marker: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One way in, with cleanup on failure: no half-started bot is returned."""
    monkeypatch.setattr(process, "_read_child_pid", lambda fd, timeout: None)
    with pytest.raises(SandboxError, match="bubblewrap did not start bot sleeper"):
        start_bot(fixture("sleeper"), run_dir=tmp_path, sandbox="bwrap", args=[marker])
    assert wait_until(lambda: not procfs.find_processes(marker), 5)


def test_missing_exposed_folder_is_a_sandbox_error(tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="not a folder"):
        start_bot(fixture("sleeper"), run_dir=tmp_path, expose=[tmp_path / "nope"],
                  sandbox="fallback")


# -- exits, descriptions, logs -----------------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("script, rc, text", [
    ("echo out; echo err >&2; exit 3", 3, "exit code 3"),
    ("exit 0", 0, "exit code 0"),
    ("kill -SEGV $$", -signal.SIGSEGV, "killed by SIGSEGV"),
])
def test_exit_status_and_logs(tmp_path: Path, mode: str, script: str, rc: int,
                              text: str) -> None:
    with start_bot(shell_bot(tmp_path, script), run_dir=tmp_path / "run", sandbox=mode) as bot:
        assert bot.wait(10) == rc
        assert bot.returncode == rc and bot.exit_description() == text
        assert not bot.killed_by_arena
        if rc == 3:
            assert bot.stdout_tail() == "out" and bot.stderr_tail() == "err"
            assert bot.stdout_path.parent == bot.launch_dir
            assert bot.launch_dir.parent == tmp_path / "run"
    assert bot.closed and bot.returncode == rc and not bot.workdir.exists()
    assert bot.stderr_path.exists()  # logs stay for fault records


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_missing_program_shows_in_stderr(tmp_path: Path, mode: str) -> None:
    body = 'name = "x"\nversion = "1"\nprotocol = "1"\ncommand = ["no-such-program-xyz"]\n'
    with start_bot(load_manifest(make_bot(tmp_path / "x", body)), run_dir=tmp_path,
                   sandbox=mode) as bot:
        assert bot.wait(10) not in (None, 0)
        assert "no-such-program-xyz" in bot.stderr_tail()


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_kill_close_and_wait_are_idempotent(tmp_path: Path, mode: str) -> None:
    bot = start_bot(fixture("sleeper"), run_dir=tmp_path, sandbox=mode)
    try:
        wait_ready(bot)
        assert bot.poll() is None and bot.exit_description() == "running"
        assert bot.wait(0.01) is None
        rss = bot.rss_bytes()
        assert rss is not None and 1 << 20 < rss < 200 << 20
        assert bot.pid in bot.sandbox_pids()
        assert bot.kill() is True and bot.kill() is True
        assert bot.returncode == -signal.SIGKILL and bot.killed_by_arena
        assert bot.exit_description() == "killed by the arena (SIGKILL)"
        assert bot.rss_bytes() is None and bot.sandbox_pids() == []
    finally:
        threads = [threading.Thread(target=bot.close) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
    bot.close()
    assert bot.closed and "closed" in repr(bot)


# -- (a)/(h) killing the sandbox kills everything the bot started ---------------------------

@pytest.mark.integration
@pytest.mark.parametrize("mode, flags, roles", [
    pytest.param("bwrap", ["--escape"], ("child alive", "grandchild alive"), marks=needs_bwrap),
    pytest.param("bwrap", ["--setsid-child"], ("child alive",), marks=needs_bwrap),
    ("fallback", [], ("child alive",)),
    ("fallback", ["--setsid-child"], ("child alive",)),
])
def test_kill_leaves_no_process_of_the_bot(tmp_path: Path, marker: str, mode: str,
                                           flags: list[str], roles: tuple[str, ...]) -> None:
    bot = start_bot(fixture("spawner"), run_dir=tmp_path, sandbox=mode, args=[marker, *flags])
    try:
        wait_ready(bot, ("ready", *roles))
        seen = procfs.find_processes(marker)
        assert len(seen) >= 1 + len(roles)
        bot.kill()
        assert bot.returncode == -signal.SIGKILL
        assert wait_until(lambda: not procfs.find_processes(marker), 5), \
            f"survivors: {procfs.find_processes(marker)}"
    finally:
        bot.close()
        for pid in procfs.find_processes(marker):  # never leave strays, even on failure
            os.kill(pid, signal.SIGKILL)


@needs_bwrap
@pytest.mark.integration
def test_bot_exit_takes_its_children_with_it(tmp_path: Path, marker: str) -> None:
    """With bubblewrap, a bot that exits by itself leaves nothing behind either."""
    script = f"{sys.executable} -c 'import time; time.sleep(600)' {marker} & echo ready; exit 5"
    with start_bot(shell_bot(tmp_path, script), run_dir=tmp_path, sandbox="bwrap") as bot:
        assert bot.wait(10) == 5
        assert wait_until(lambda: not procfs.find_processes(marker), 5)


# -- (b) an arena killed with SIGKILL leaves nothing behind ---------------------------------

@pytest.mark.integration
@pytest.mark.parametrize("mode, bot, flags", [
    pytest.param("bwrap", "spawner", ["--escape"], marks=needs_bwrap),
    # The fallback only guarantees this for the bot's main process (setpriv --pdeathsig).
    ("fallback", "sleeper", []),
])
def test_arena_killed_with_sigkill_leaves_no_bot_process(tmp_path: Path, marker: str,
                                                         mode: str, bot: str,
                                                         flags: list[str]) -> None:
    env = dict(os.environ, PYTHONPATH=str(sandbox.REPO_ROOT))
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / "supervisor.py"), str(BOTFIXTURES / bot),
         str(tmp_path), mode, marker, *flags],
        capture_output=True, timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr.decode()
    report = json.loads(done.stdout)
    assert report["arena_said"] == "ready", done.stderr.decode()
    assert len(report["before"]) >= 2  # the fake arena and the bot (and more with bwrap)
    assert report["leftover"] == []
    assert report["all_reaped"]


# -- (c) memory, CPU and output limits -------------------------------------------------------

@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_memory_hog_dies_and_says_so(tmp_path: Path, mode: str) -> None:
    limits = Limits(address_space_bytes=256 << 20)
    with start_bot(fixture("hog"), run_dir=tmp_path, sandbox=mode, limits=limits) as bot:
        assert bot.wait(30) not in (None, 0)
        description = bot.exit_description()
        assert "out of memory" in description and "256 MiB" in description, description
        assert "MemoryError" in bot.stderr_tail()


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_cpu_limit_sends_sigxcpu(tmp_path: Path, mode: str) -> None:
    limits = Limits(cpu_seconds=1)
    with start_bot(fixture("cpuburn"), run_dir=tmp_path, sandbox=mode, limits=limits) as bot:
        assert bot.wait(30) == -signal.SIGXCPU
        assert bot.exit_description() == "SIGXCPU (CPU limit)"


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_stderr_flood_is_capped_and_never_blocks(tmp_path: Path, mode: str) -> None:
    cap = 1 << 20
    with start_bot(fixture("flood"), run_dir=tmp_path, sandbox=mode, limits=Limits(log_bytes=cap)) as bot:
        assert bot.wait(30) is not None, "the flood blocked"  # EPIPE past the cap: it ends
        bot.close()  # the logs are copied by the arena: close drains what is still in the pipes
        kept = bot.stderr_path.read_bytes()
        assert len(kept) - cap < 200 and kept.rstrip().endswith(b"this stream is closed")
        # stdout shares the allowance: its "survived" line came too late to be kept
        assert bot.stdout_path.read_bytes().lstrip().startswith(b"[arena] log cap of 1 MiB")
        assert bot.output_capped() and "output cap 1 MiB per tournament reached" in bot.exit_description()


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_the_log_cap_counts_every_launch_of_a_bot(tmp_path: Path, mode: str) -> None:
    cap = 256 << 10
    for _launch in range(2):
        with start_bot(fixture("flood"), run_dir=tmp_path, sandbox=mode, limits=Limits(log_bytes=cap)) as bot:
            assert bot.wait(30) is not None and bot.output_capped()
    first, second = sorted(tmp_path.glob("*/stderr.log"), key=lambda p: p.stat().st_size, reverse=True)
    assert first.stat().st_size - cap < 200  # the first launch used the tournament's whole allowance
    assert second.read_bytes().lstrip().startswith(b"[arena] log cap")  # the second kept nothing


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_a_program_writing_past_its_log_cap_gets_sigpipe(tmp_path: Path, mode: str) -> None:
    with start_bot(shell_bot(tmp_path, "exec yes flood 1>&2"), run_dir=tmp_path, sandbox=mode,
                   limits=Limits(log_bytes=64 << 10)) as bot:
        assert bot.wait(30) == -signal.SIGPIPE
        assert "output cap 0.0625 MiB per tournament reached" in bot.exit_description()
        assert bot.stderr_path.stat().st_size - (64 << 10) < 200


# -- (e)/(f)/(g) what the bot can see and do inside bubblewrap -----------------------------

def run_probe(run_dir: Path, *, endpoint: str | None = None, token: str | None = None,
              router: zmq.Socket[bytes] | None = None, args: tuple[str, ...] = (),
              env: dict[str, str] | None = None) -> tuple[dict[str, object], BotProcess]:
    """Run the probe bot under bwrap, answer its ZeroMQ hello, return its report."""
    received: list[list[bytes]] = []
    with start_bot(fixture("probe"), run_dir=run_dir, sandbox="bwrap", endpoint=endpoint,
                   token=token, args=args, env=env) as bot:
        if router is not None and router.poll(10_000):
            frames = router.recv_multipart()
            received.append(frames)
            router.send_multipart([frames[0], b"pong"])
        assert bot.wait(30) == 0, bot.stderr_tail()
        report = json.loads(bot.stdout_tail(max_bytes=1 << 20))
    report["received"] = [[f.decode() for f in msg[1:]] for msg in received]
    return report, bot


@needs_bwrap
@pytest.mark.integration
def test_sandbox_network_filesystem_and_environment(tmp_path: Path, sock_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_TEST_SECRET", "must-not-leak")
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    run_dir = Path(tempfile.mkdtemp(prefix="arena-run-", dir="/var/tmp"))  # outside /tmp
    (run_dir / "opponent-secret.txt").write_text("hidden")
    ctx = zmq.Context()
    try:
        router = ctx.socket(zmq.ROUTER)
        router.linger = 0
        endpoint = f"ipc://{sock_dir}/arena.sock"
        router.bind(endpoint)
        probe = BOTFIXTURES / "probe"
        report, bot = run_probe(run_dir, endpoint=endpoint, token="tok-1", router=router,
                                args=("--port", str(port), "--peek", str(run_dir),
                                      "--peek", str(sock_dir)),
                                env={"EXTRA": "1"})
        # (e) no network, but the ipc:// socket in the exposed folder works
        assert str(report["tcp"]).startswith("error: ConnectionRefusedError")
        assert report["zmq"] == "pong" and report["received"] == [["tok-1", "probe"]]
        # (f) read-only root, empty private working directory
        assert report["cwd"] == SANDBOX_WORKDIR and report["cwd_listing_at_start"] == []
        assert report["write_cwd"] == "ok" and report["write_home"] == "ok"
        assert report["write_tmp"] == "ok"  # a private /tmp, gone with the sandbox
        assert not Path("/tmp/arena-probe.txt").exists()
        for key in ("write_etc", "write_root"):
            assert "Read-only file system" in str(report[key]), key
        assert not Path("/etc/arena-probe.txt").exists() and not Path("/arena-probe.txt").exists()
        # (g) the bot folder is read-only
        assert "Read-only file system" in str(report["write_bot_dir"])
        assert not (probe / "written-by-bot.txt").exists()
        # the run directory is not there at all; the link folder shows only the socket
        peek = report["peek"]
        assert isinstance(peek, dict)
        assert "FileNotFoundError" in str(peek[str(run_dir)])
        assert peek[str(sock_dir)] == ["arena.sock"]
        # a minimal root: the system, the SDK, and the top folders leading to the interpreter
        # and the bot; no /home, /var, /srv, /run or /mnt of the host
        leading = {p.parts[1] for p in (*view.interpreter_paths(), probe)}
        system = {n for n in os.listdir("/") if n in ("bin", "sbin", "usr") or n.startswith("lib")}
        assert set(report["root_listing"]) == {"arena-sdk", "dev", "etc", "proc", "tmp"} | system | leading
        # an unprivileged uid without capabilities (the arena here may run as root)
        assert report["uid"] == [65534, 65534, 65534]
        caps = report["capabilities"]
        assert isinstance(caps, dict) and caps["CapEff"] == caps["CapBnd"] == "0" * 16
        # own PID namespace (1 bwrap's init, 2 the guard shell, 3 the bot, 4 the guard's
        # watcher); clean environment
        assert report["pid"] == 3 and report["visible_pids"] == [1, 2, 3, 4]
        env = report["env"]
        assert isinstance(env, dict)
        assert set(env) == {"PATH", "HOME", "TMPDIR", "LANG", "PYTHONPATH",
                            "PYTHONDONTWRITEBYTECODE", "ARENA_ENDPOINT", "ARENA_TOKEN", "ARENA_RUN",
                            "PROBE_FROM_MANIFEST", "EXTRA", "PWD"}  # bwrap sets PWD
        assert env["HOME"] == SANDBOX_WORKDIR and env["ARENA_ENDPOINT"] == endpoint
        assert env["PYTHONPATH"] == "/arena-sdk"
        assert report["protocol_importable"] is True and report["engine_importable"] == "arena.engine"
        assert report["registry_importable"] is False  # the SDK, not the whole arena
        assert report["executable"] == sys.executable
        assert report["editable_hook_ran"] is False  # shown empty: the SDK comes from PYTHONPATH
        # the scratch file stayed in this launch's folder, which close() removed
        assert not bot.workdir.exists()
        # (f) a second launch starts empty again and does not see the first one's files
        second, bot2 = run_probe(run_dir)
        assert second["cwd_listing_at_start"] == [] and bot2.launch_dir != bot.launch_dir
    finally:
        ctx.destroy(linger=0)
        listener.close()
        shutil.rmtree(run_dir, ignore_errors=True)


@pytest.mark.integration
def test_fallback_environment_is_clean_too(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_TEST_SECRET", "must-not-leak")
    with start_bot(shell_bot(tmp_path, "env; pwd; ls -A"), run_dir=tmp_path / "run",
                   sandbox="fallback", token="t", env={"EXTRA": "1"}) as bot:
        assert bot.wait(10) == 0
        out = bot.stdout_tail(max_lines=100).splitlines()
    names = {line.split("=", 1)[0] for line in out if "=" in line}
    assert "ARENA_TEST_SECRET" not in names and {"HOME", "ARENA_TOKEN", "EXTRA"} <= names
    assert f"HOME={bot.workdir}" in out and out[-1] == str(bot.workdir)  # empty ls


@pytest.mark.integration
def test_keep_workdir(tmp_path: Path) -> None:
    with start_bot(shell_bot(tmp_path, "echo hi > note.txt"), run_dir=tmp_path / "run",
                   sandbox="fallback", keep_workdir=True) as bot:
        assert bot.wait(10) == 0
    assert (bot.workdir / "note.txt").read_text() == "hi\n"


@pytest.mark.integration
@pytest.mark.parametrize("mode", MODES)
def test_bot_outlives_the_thread_that_started_it(tmp_path: Path, mode: str) -> None:
    """--pdeathsig watches the forking *thread*: start_bot forks from a long-lived launcher
    thread, so a caller thread that ends does not take the bot with it."""
    box: list[BotProcess] = []
    native: list[int] = []

    def starter() -> None:
        native.append(threading.get_native_id())
        box.append(start_bot(fixture("sleeper"), run_dir=tmp_path, sandbox=mode))

    thread = threading.Thread(target=starter)
    thread.start()
    thread.join(10)
    with box[0] as bot:
        assert wait_until(lambda: not Path(f"/proc/self/task/{native[0]}").exists())
        assert bot.wait(0.3) is None, bot.exit_description()
        wait_ready(bot)


@pytest.mark.integration
def test_a_forked_child_can_start_bots(tmp_path: Path) -> None:
    """A process forked after bots were started (the worker pool) gets its own launcher."""
    with start_bot(fixture("sleeper"), run_dir=tmp_path, sandbox="fallback") as bot:
        wait_ready(bot)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            child_code = 1
            try:
                with start_bot(fixture("sleeper"), run_dir=tmp_path, sandbox="fallback") as b:
                    child_code = 0 if wait_until(lambda: "ready" in b.stdout_tail(), 10) else 2
            finally:
                os._exit(child_code)
        code = reap(pid, 20)
        if code is None:
            os.kill(pid, signal.SIGKILL)
            reap(pid, 10)
        assert code == 0
