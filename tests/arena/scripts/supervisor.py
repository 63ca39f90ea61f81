"""Runs fake_arena.py as its child, SIGKILLs it once its bot is up, and reports as JSON
whether every process the arena started went away.

The supervisor makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so every
orphan of the arena's tree is re-parented to it; ``os.waitpid(-1)`` failing with ECHILD then
proves that every descendant has exited and been reaped.

argv: BOT_DIR RUN_DIR SANDBOX_MODE MARKER [BOT_ARGS...]   (MARKER is also passed to the bot)
"""
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from arena.botproc.procfs import find_processes

PR_SET_CHILD_SUBREAPER = 36
libc = ctypes.CDLL(None, use_errno=True)
if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit(f"prctl failed: errno {ctypes.get_errno()}")

bot_dir, run_dir, mode, marker, *bot_args = sys.argv[1:]
script = Path(__file__).with_name("fake_arena.py")
arena = subprocess.Popen([sys.executable, str(script), bot_dir, run_dir, mode, marker, *bot_args],
                         stdout=subprocess.PIPE)
assert arena.stdout is not None
line = b""
deadline = time.monotonic() + 30
while not line.endswith(b"\n") and time.monotonic() < deadline:
    if select.select([arena.stdout], [], [], 0.05)[0]:
        chunk = os.read(arena.stdout.fileno(), 100)
        if not chunk:
            break
        line += chunk
before = sorted(find_processes(marker))
os.kill(arena.pid, signal.SIGKILL)
arena.wait(10)
arena.stdout.close()
all_reaped = False
deadline = time.monotonic() + 10
while time.monotonic() < deadline:
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        all_reaped = True
        break
    if pid == 0:
        time.sleep(0.005)
leftover = sorted(find_processes(marker))
for pid in leftover:  # clean up after a failure so the test run stays tidy
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
print(json.dumps({"arena_said": line.decode().strip(), "before": before,
                  "all_reaped": all_reaped, "leftover": leftover}))
