"""Reports what the sandbox allows as one JSON object on stdout.

argv: [--port N] [--peek DIR]... Connects a ZeroMQ DEALER to $ARENA_ENDPOINT, sends
[$ARENA_TOKEN, b"probe"] and waits up to 5 s for a reply; tries tcp to 127.0.0.1:N; tries
writes in several places; lists --peek folders.
"""
import argparse
import importlib.util
import json
import os
import socket
import sys
from collections.abc import Callable


def attempt(fn: Callable[[], object]) -> object:
    try:
        result = fn()
    except Exception as exc:  # report, never crash: the test reads the report
        return f"error: {type(exc).__name__}: {exc}"
    return "ok" if result is None else result


def write(path: str) -> object:
    def go() -> None:
        with open(path, "w") as fh:
            fh.write("probe was here")
    return attempt(go)


def tcp(port: int) -> object:
    def go() -> None:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    return attempt(go)


def listing(folder: str) -> object:
    return attempt(lambda: sorted(os.listdir(folder)))


def zmq_roundtrip() -> str:
    import zmq
    ctx = zmq.Context()
    try:
        sock = ctx.socket(zmq.DEALER)
        sock.linger = 0
        sock.connect(os.environ["ARENA_ENDPOINT"])
        sock.send_multipart([os.environ["ARENA_TOKEN"].encode(), b"probe"])
        if not sock.poll(5000):
            return "error: no reply"
        return sock.recv().decode()
    finally:
        ctx.destroy(linger=0)


parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int)
parser.add_argument("--peek", action="append", default=[])
opts = parser.parse_args()
here = os.path.dirname(os.path.abspath(__file__))
report = {
    "cwd": os.getcwd(),
    "cwd_listing_at_start": sorted(os.listdir(".")),
    "env": dict(os.environ),
    "pid": os.getpid(),
    "visible_pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "protocol_importable": importlib.util.find_spec("protocol") is not None,
    "write_cwd": write("scratch.txt"),
    "write_home": write(os.path.join(os.path.expanduser("~"), "home.txt")),
    "write_etc": write("/etc/arena-probe.txt"),
    "write_root": write("/arena-probe.txt"),
    "write_tmp": write("/tmp/arena-probe.txt"),
    "write_bot_dir": write(os.path.join(here, "written-by-bot.txt")),
    "zmq": attempt(zmq_roundtrip) if "ARENA_ENDPOINT" in os.environ else None,
    "tcp": tcp(opts.port) if opts.port else None,
    "peek": {d: listing(d) for d in opts.peek},
    "executable": sys.executable,
    "editable_hook_ran": any(name.startswith("__editable__") for name in sys.modules),
    "uid": [os.getuid(), os.geteuid(), os.getgid()],
    "capabilities": {line.split(":")[0]: line.split()[1] for line in open("/proc/self/status")
                     if line.startswith("Cap")},
    "root_listing": listing("/"),
    "engine_importable": attempt(lambda: __import__("arena.engine").engine.__name__),
    "registry_importable": importlib.util.find_spec("arena.registry") is not None,
}
print(json.dumps(report), flush=True)
