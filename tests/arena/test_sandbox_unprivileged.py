"""The sandbox started by an unprivileged arena: bubblewrap maps the bot's uid in a user
namespace instead of dropping root with setpriv (the path a CI runner without root takes).

The test switches to ``nobody`` to be that arena, so it needs root. The arena side runs on the
system's Python (``/usr/bin/python3``), since the test's own interpreter may live where nobody
cannot read (a pyenv under /root), with the test environment's packages on its path (the protocol
it imports needs orjson): so the system's Python must be the test's version (3.11 here).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.botproc.sandbox import BOT_UID, REPO_ROOT

pytestmark = [pytest.mark.integration, pytest.mark.requires("bubblewrap", "root")]

SYSTEM_PYTHON = "/usr/bin/python3"
PACKAGES = os.pathsep.join(dict.fromkeys(sysconfig.get_paths()[kind] for kind in ("purelib", "platlib")))
ARENA_SIDE = """
import json, sys
from pathlib import Path
from arena.botproc import load_manifest, start_bot
with start_bot(load_manifest(sys.argv[1]), run_dir=Path(sys.argv[2]), sandbox="bwrap") as bot:
    rc = bot.wait(30)
    print(json.dumps({"rc": rc, "out": bot.stdout_tail(max_lines=50), "err": bot.stderr_tail(),
                      "view": bot.view.to_dict() if bot.view else None}))
"""
SCRIPT = ("id -u; echo hi > /tmp/work/x && echo wrote-workdir; "
          "(echo no > /etc/x) 2>/dev/null || echo etc-read-only; "
          "test -e /etc/shadow || echo no-shadow; "
          "for i in 1 2 3 4 5 6; do dd if=/dev/zero of=/tmp/work/big$i bs=1M count=15 2>/dev/null; done; "
          "echo big=$(($(cat /tmp/work/big* | wc -c) >> 20))")  # MiB, rounded down  # files under the 16 MiB file limit


def as_nobody(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["setpriv", f"--reuid={BOT_UID}", f"--regid={BOT_UID}", "--clear-groups", "--",
                           "env", "-i", "PATH=/usr/bin:/bin", f"PYTHONPATH={REPO_ROOT}{os.pathsep}{PACKAGES}", *argv],
                          capture_output=True, text=True, timeout=120, cwd="/")


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder nobody can reach (pytest's own temporary folders are private to root)."""
    path = Path(tempfile.mkdtemp(prefix="arena-unpriv-", dir="/tmp"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_an_unprivileged_arena_maps_the_bot_to_nobody_with_the_same_view(shared: Path) -> None:
    ours = f"{sys.version_info.major}.{sys.version_info.minor}"
    version = as_nobody(SYSTEM_PYTHON, "-c", f"import sys, arena.botproc; print(sys.version.startswith('{ours}.'))")
    if version.stdout.strip() != "True":
        pytest.skip(f"needs {SYSTEM_PYTHON} {ours}, the tests' Python version, that nobody can run with the "
                    f"project and its packages readable (apt-get install python3): {version.stderr.strip()[-200:]}")
    if as_nobody("unshare", "--user", "true").returncode != 0:
        pytest.skip("needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1)")
    bot, run = shared / "bot", shared / "run"
    bot.mkdir()
    (bot / "bot.toml").write_text(f'name = "sh"\nversion = "1"\nprotocol = "1"\n'
                                  f'command = ["sh", "-c", {json.dumps(SCRIPT)}]\n')
    run.mkdir()
    shutil.chown(run, BOT_UID, BOT_UID)
    done = as_nobody(SYSTEM_PYTHON, "-c", ARENA_SIDE, str(bot), str(run))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["rc"] == 0, result["err"]
    lines = result["out"].splitlines()
    assert lines[0] == str(BOT_UID)
    assert {"wrote-workdir", "etc-read-only", "no-shadow"} <= set(lines)
    big = int(next(line for line in lines if line.startswith("big="))[4:])
    assert 62 <= big <= 63  # the 64 MiB bound holds here too (1 MiB of it is /dev/shm, a page holds x)
    view = result["view"]
    assert view["uid"] == BOT_UID and view["disk_bytes"] == 64 << 20
    assert str(bot) in {m["target"] for m in view["mounts"]} and sys.prefix not in {m["target"] for m in view["mounts"]}
