"""The Python bot SDK's CPU per message, in process and in a live bot process, A/B against another checkout.

Replays the messages a bot process gets in a tournament (``request``, ``hand_over`` and
``match_over`` of one seat, made by ``arena.referee.Referee`` and the protocol's builders, so
they are the arena's real bytes) and prints the SDK's CPU per message and per hand:

- in process: ``protocol.client._Session.handle`` over the stream with the checkout's random
  bot and a socket that keeps nothing (parse, ``act``, the reply's encoding; no socket);
- live: the random bot (``bots/random``) as a process of its own, unsandboxed, against a ROUTER
  socket here that keeps ``--games`` games in flight (``--games 1``: lock-step) and answers each
  reply with the game's next messages, like the arena's conductor. The bot's CPU (user +
  system, all its threads) comes from ``wait4``, exactly; its start-up (a run of no game) is
  taken off and printed apart. The replay ignores the bot's choices (the next request is the
  recorded one), which the random bot does not notice;
- whole run (``--whole-run``, instead of the two above): ``arena run`` of three random bots,
  ``--pairs`` pairs per pairing, ``--max-games --games``, sandboxed as usual; the CPU of every
  process under it is sampled from ``/proc`` every 100 ms (``machine.run_sampled``; the bot
  processes' apart) and divided by the hands played. Sampled, not taken from ``getrusage``: not
  all of the sandboxed bots' CPU reaches the ``RUSAGE_CHILDREN`` of the process that started the
  arena, which came out a fifth to a third below the sampled sum here.

With ``--against DIR`` (another checkout, e.g. ``git worktree add /tmp/base main``) each figure
is measured for both, interleaved (A B A B ...), and the ratio is printed: the way to tell an
SDK change's effect on this noisy machine.

    .venv/bin/python bench/bot_sdk.py [--against DIR] [--matches 60] [--games 16] [--runs 5]
    .venv/bin/python bench/bot_sdk.py --whole-run [--against DIR] [--pairs 100] [--runs 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import zmq
from machine import load_average, run_sampled  # bench/machine.py: a script's folder is on its import path

# bench/protocol.py is named like the ``protocol`` package: keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from arena.clock import TimeControl  # noqa: E402
from arena.engine import Rules  # noqa: E402
from arena.referee import Referee  # noqa: E402
from protocol import make_hand_over, make_match_over, make_request, make_shutdown, make_welcome  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SEAT = 0  # the stream is what the seat-0 bot of each match gets


def game_stream(game_id: str, seed: int) -> list[bytes]:
    """The messages seat ``SEAT`` gets in one match, in order; the other seat plays at random."""
    referee = Referee(game_id, seed, Rules(), ("a", "b"), TimeControl(time_limit_ms=5000))
    rng = random.Random(seed)
    out: list[bytes] = []
    seq = 1
    while (decision := referee.decision()) is not None:
        if decision.seat == SEAT:
            out.append(make_request(seq, game_id, decision.seat, decision.view, decision.legal_actions,
                                    decision.time_limit_ms, decision.bank_ms))
        seq += 1
        actions = decision.legal_actions
        if "declare" in actions:
            action = "declare" if decision.view["totals"][decision.seat] >= 66 else rng.choice(
                [a for a in actions if a != "declare"] or actions)
        else:
            action = rng.choice(actions)
        for notice in referee.answer(action, 0.001):
            if notice.seat != SEAT:
                continue
            if notice.kind == "hand_over":
                assert notice.view is not None
                out.append(make_hand_over(game_id, SEAT, notice.view, notice.score, notice.carry))
            else:
                out.append(make_match_over(game_id, SEAT, notice.score, notice.winner, hands=notice.hands,
                                           forfeit=notice.forfeit))
    return out


def is_request(data: bytes) -> bool:
    return b'"type":"request"' in data


def hands_of(games: list[list[bytes]]) -> int:
    return sum(1 for game in games for data in game if b'"type":"hand_over"' in data)


# --- in process ------------------------------------------------------------------------------


def load_client(checkout: Path, alias: str) -> ModuleType:
    """``checkout``'s ``protocol.client``, imported as ``alias.client`` beside this checkout's."""
    if checkout.resolve() == ROOT:
        import protocol.client
        return protocol.client
    spec = importlib.util.spec_from_file_location(alias, checkout / "protocol" / "__init__.py",
                                                  submodule_search_locations=[str(checkout / "protocol")])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[alias] = package
    spec.loader.exec_module(package)
    return importlib.import_module(f"{alias}.client")


def random_bot_class(checkout: Path, client: ModuleType) -> Any:
    """``checkout``'s random bot (bots/random/bot.py, not run), importing ``client`` as its SDK."""
    spec = importlib.util.spec_from_file_location(f"random_bot_{id(client)}", checkout / "bots" / "random" / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    saved = {name: sys.modules.get(name) for name in ("protocol", "protocol.client")}
    sys.modules["protocol"], sys.modules["protocol.client"] = sys.modules[client.__package__ or ""], client
    try:
        spec.loader.exec_module(module)
    finally:
        for name, was in saved.items():
            if was is None:
                del sys.modules[name]
            else:
                sys.modules[name] = was
    return module.RandomBot


class NullSocket:
    """Takes the replies and keeps none (``send`` for checkouts from before replies were held)."""

    holding = False

    def send(self, data: bytes) -> None:
        pass

    def hold(self, data: bytes) -> None:
        pass

    def flush(self) -> None:
        pass


def in_process_cpu(client: ModuleType, bot_class: Any, stream: list[bytes]) -> float:
    """CPU seconds of one ``_Session.handle`` pass over ``stream`` (a welcome first)."""
    session = client._Session(bot_class, client.Settings("ipc:///unused", "t", 16, 0.0), "random", "1.0", sys.stderr)
    handle, sock = session.handle, NullSocket()
    handle(sock, make_welcome(16))
    start = time.process_time()
    for data in stream:
        handle(sock, data)
    return time.process_time() - start


# --- live ------------------------------------------------------------------------------------


def live_cpu(checkout: Path, games: list[list[bytes]], in_flight: int, ipc_dir: str) -> float:
    """CPU seconds of a random bot process of ``checkout`` playing ``games``, ``in_flight`` at once."""
    endpoint = f"ipc://{ipc_dir}/bench.sock"
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    env = {**os.environ, "PYTHONPATH": str(checkout), "ARENA_ENDPOINT": endpoint, "ARENA_TOKEN": "bench",
           "ARENA_MAX_GAMES": str(in_flight), "PYTHONDONTWRITEBYTECODE": "1"}
    bot = subprocess.Popen([sys.executable, "bot.py"], cwd=checkout / "bots" / "random", env=env)
    try:
        ident, _hello = sock.recv_multipart()
        sock.send_multipart([ident, make_welcome(in_flight)])
        for burst in bursts(games, in_flight):
            for data in burst:
                sock.send_multipart([ident, data])
            for _ in range(sum(map(is_request, burst))):
                if not sock.poll(10_000):
                    raise RuntimeError("the bot did not answer within 10 s")
                sock.recv_multipart()
        sock.send_multipart([ident, make_shutdown("bench over")])
        _, status, usage = os.wait4(bot.pid, 0)
        bot.returncode = os.waitstatus_to_exitcode(status)
        if bot.returncode != 0:
            raise RuntimeError(f"the bot exited with status {bot.returncode}")
        return usage.ru_utime + usage.ru_stime
    finally:
        if bot.returncode is None:
            bot.kill()
            bot.wait()
        sock.close(0)
        ctx.term()


def bursts(games: list[list[bytes]], in_flight: int) -> Iterator[list[bytes]]:
    """The messages to send together: each in-flight game's messages up to its next request
    (a game's last burst ends with its ``match_over``); a finished game's slot takes the next."""
    queue = [list(reversed(game)) for game in reversed(games)]
    flying: list[list[bytes]] = []
    while queue or flying:
        while queue and len(flying) < in_flight:
            flying.append(queue.pop())
        burst: list[bytes] = []
        for game in flying:
            while game:
                burst.append(game.pop())
                if is_request(burst[-1]):
                    break
        flying = [game for game in flying if game]
        yield burst


# --- whole run -------------------------------------------------------------------------------


def whole_run(checkout: Path, pairs: int, games: int, out: Path) -> tuple[float, float, int]:
    """(bot processes' CPU s, every descendant's CPU s, hands) of one multiplexed ``arena run``."""
    command = [sys.executable, "-m", "arena.cli", "run", "--bots",
               *[f"random{i}={checkout / 'bots/random'}" for i in range(3)], "--pairs", str(pairs),
               "--public-deals", "--seed", "5", "--concurrency", "2", "--max-games", str(games), "--out", str(out),
               "--quiet", "--allow-unvalidated", "--time-limit-ms", "5000"]
    tree = run_sampled(command, checkout)
    with sqlite3.connect(out / "arena.sqlite") as con:
        hands = sum(int(n) for (n,) in con.execute("SELECT hands FROM matches"))
    return tree.bots_s, tree.cpu_s, hands


def whole_runs(checkouts: dict[str, Path], args: argparse.Namespace) -> None:
    """Print the bots' and the tree's CPU per hand of ``--runs`` interleaved whole runs."""
    bots: dict[str, list[float]] = {name: [] for name in checkouts}
    tree: dict[str, list[float]] = {name: [] for name in checkouts}
    with tempfile.TemporaryDirectory(prefix="bot-sdk-") as tmp:
        for run in range(args.runs):
            for name, path in checkouts.items():
                bot_s, all_s, hands = whole_run(path, args.pairs, args.games, Path(tmp) / f"{name}{run}")
                bots[name].append(bot_s / hands)
                tree[name].append(all_s / hands)
    print(f"whole runs: 3 random bots, {args.pairs} pairs per pairing ({hands} hands), --max-games {args.games}; "
          "ms of CPU per hand, start-up included")
    report("whole run, bot processes", bots, {"ms/hand": (1, 1e3)})
    report("whole run, every process", tree, {"ms/hand": (1, 1e3)})
    print(f"load {load_average()}")


# --- main ------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", type=Path, help="another checkout to compare with (A; this one is B)")
    parser.add_argument("--matches", type=int, default=60, help="matches in the replayed stream")
    parser.add_argument("--games", type=int, default=16, help="games in flight in the live bot")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-live", action="store_true", help="only the in-process figures")
    parser.add_argument("--whole-run", action="store_true", help="whole arena runs instead of the replay")
    parser.add_argument("--pairs", type=int, default=100, help="pairs per pairing of a whole run")
    args = parser.parse_args()
    if args.whole_run:
        whole_runs({"B": ROOT} if args.against is None else {"A": args.against.resolve(), "B": ROOT}, args)
        return
    games = [game_stream(f"m{i}", 1000 + i) for i in range(args.matches)]
    stream = [data for game in games for data in game]
    hands, messages = hands_of(games), len(stream)
    checkouts = {"B": ROOT} if args.against is None else {"A": args.against.resolve(), "B": ROOT}
    print(f"{args.matches} matches: {messages} messages to one seat, {hands} hands "
          f"({sum(map(is_request, stream))} requests); A = {checkouts.get('A', '-')}, B = {ROOT}")
    clients = {name: load_client(path, f"protocol_{name.lower()}") for name, path in checkouts.items()}
    bots = {name: random_bot_class(checkouts[name], client) for name, client in clients.items()}
    inproc: dict[str, list[float]] = {name: [] for name in checkouts}
    for _ in range(max(3, args.runs * 4)):
        for name, client in clients.items():
            inproc[name].append(in_process_cpu(client, bots[name], stream))
    per = {"us/message": (messages, 1e6), "ms/hand": (hands, 1e3)}
    report("in process (handle)", inproc, per)
    if args.skip_live:
        return
    live: dict[str, list[float]] = {name: [] for name in checkouts}
    start: dict[str, list[float]] = {name: [] for name in checkouts}
    with tempfile.TemporaryDirectory(prefix="bot-sdk-") as ipc_dir:
        for _ in range(args.runs):
            for name, path in checkouts.items():
                start[name].append(live_cpu(path, [], 1, ipc_dir))  # start-up, handshake and exit
                live[name].append(live_cpu(path, games, args.games, ipc_dir) - start[name][-1])
    report(f"live bot, {args.games} in flight", live, per)
    report("live bot, start-up and exit", start, {"ms": (1, 1e3)})
    print(f"load {load_average()}")


def report(what: str, cpu: dict[str, list[float]], per: Mapping[str, tuple[float, float]]) -> None:
    """Median CPU of each checkout in each unit of ``per`` (unit: (count, scale)), and B over A."""
    med = {name: statistics.median(values) for name, values in cpu.items()}
    for name, seconds in med.items():
        figures = "  ".join(f"{seconds / count * scale:7.3f} {unit}" for unit, (count, scale) in per.items())
        print(f"{what:28} {name}: {figures} (median of {len(cpu[name])})")
    if len(med) == 2:
        ratios = [b / a for a, b in zip(cpu["A"], cpu["B"])]
        print(f"{what:28} B/A: {statistics.median(ratios):.2f} (range {min(ratios):.2f}-{max(ratios):.2f}, "
              "pairs run side by side)")


if __name__ == "__main__":
    main()
