"""A stand-in "arena": starts one bot with start_bot, prints "ready" once the bot has
printed its ready line, then blocks until it is killed (the test SIGKILLs it).

argv: BOT_DIR RUN_DIR SANDBOX_MODE MARKER [BOT_ARGS...]
"""
import sys
import time
from pathlib import Path

from arena.botproc import load_manifest, start_bot

bot_dir, run_dir, mode, *bot_args = sys.argv[1:]
bot = start_bot(load_manifest(bot_dir), run_dir=Path(run_dir), sandbox=mode, args=bot_args)
deadline = time.monotonic() + 30
while "ready" not in bot.stdout_tail() and time.monotonic() < deadline:
    if bot.poll() is not None:
        sys.exit(f"bot exited early: {bot.exit_description()}: {bot.stderr_tail()}")
    time.sleep(0.005)
print("ready" if "ready" in bot.stdout_tail() else "not ready", flush=True)
while True:
    time.sleep(60)
