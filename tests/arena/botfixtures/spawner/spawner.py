"""Spawns processes meant to outlive it; every process ignores SIGTERM/SIGHUP/SIGINT.

argv: MARKER [--setsid-child] [--escape]. Without flags: one child in the bot's process group.
--setsid-child: the child calls setsid() (leaves the group, stays a descendant).
--escape: also a grandchild via double fork + setsid, re-parented away from the bot.
Each process prints "<role> alive" to stdout; the bot prints "ready" last.
"""
import os
import signal
import sys
import time


def ignore_signals() -> None:
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)


def linger(role: str) -> None:
    ignore_signals()
    print(f"{role} alive", flush=True)
    while True:
        time.sleep(60)


ignore_signals()
if os.fork() == 0:
    if "--setsid-child" in sys.argv:
        os.setsid()
    linger("child")
if "--escape" in sys.argv:
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            linger("grandchild")
        os._exit(0)
    os.waitpid(middle, 0)
print("ready", flush=True)
linger("bot")
