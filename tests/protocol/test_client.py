"""The bot SDK against a real ROUTER socket, with real bot processes."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from typing import Any

import jsonschema
import orjson
import pytest

from protocol import (
    PROTOCOL_VERSION,
    make_hand_over,
    make_reject,
    make_request,
    make_shutdown,
    make_welcome,
    parse_hello,
    parse_reply,
)
from protocol.client import (
    EXIT_ARENA_GONE,
    Bot,
    EXIT_BOT_ERROR,
    EXIT_OK,
    EXIT_REJECTED,
    EXIT_USAGE,
    Settings,
    serve,
)

from .conftest import RANDOM_BOT, SCRIPTS, WAIT_MS, FakeArena, SpawnBot
from .play import Game, drive

pytestmark = pytest.mark.integration

LOGGING_BOT = SCRIPTS / "logging_bot.py"


def handshake(arena: FakeArena, max_games: int = 1) -> tuple[bytes, dict[str, Any]]:
    ident, data = arena.recv()
    hello = parse_hello(data)
    assert ident == hello.token.encode()  # the routing identity is the token
    arena.send(ident, make_welcome(max_games))
    return ident, orjson.loads(data)


def shut_down(arena: FakeArena, ident: bytes, bot: Any) -> None:
    arena.send(ident, make_shutdown("test over"))
    assert bot.wait() == EXIT_OK, bot.stderr()


def log_lines(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line[4:]) for line in stderr.splitlines() if line.startswith("LOG ")]


def test_random_bot_plays_a_match_and_shuts_down(
    arena: FakeArena, spawn_bot: SpawnBot, validator: jsonschema.Draft202012Validator
) -> None:
    bot = spawn_bot(RANDOM_BOT, "tok-random")
    ident, hello = handshake(arena, max_games=4)
    assert hello == {
        "v": PROTOCOL_VERSION, "type": "hello", "token": "tok-random", "name": "random",
        "version": "1.0", "capabilities": {"max_games": 16},
    }
    sent: list[bytes] = []
    game = Game("m1", seed=1, bot_seat=0)
    drive(arena, ident, [game], interleave=False, check=sent.append)
    assert game.match.is_over
    assert bot.rss_kib() < 40 * 1024  # a random bot stays under 40 MB of RSS
    shut_down(arena, ident, bot)
    assert bot.stderr() == ""
    kinds = [orjson.loads(m)["type"] for m in sent]
    assert kinds.count("request") >= 10 and kinds.count("hand_over") == len(game.match.results)
    assert kinds[-1] == "match_over"
    for data in sent + arena.received:  # what the arena sent and what the SDK produced
        validator.validate(orjson.loads(data))
    replies = [parse_reply(data) for data in arena.received[1:]]
    assert [r.seq for r in replies] == list(range(1, len(replies) + 1))
    assert {r.game_id for r in replies} == {"m1"}


def test_stale_bad_and_early_messages_are_ignored(arena: FakeArena, spawn_bot: SpawnBot) -> None:
    bot = spawn_bot(LOGGING_BOT, "tok-ignore")
    ident, data = arena.recv()
    view = Game("g", seed=3, bot_seat=0).bot_view()
    assert view is not None
    early = make_request(1, "g", 0, view, view["legal_actions"], 50, 0)
    arena.send(ident, early)  # before the welcome: ignored
    arena.send(ident, make_welcome(1))
    arena.send(ident, b"\xff not json")  # ignored with a warning
    arena.send(ident, b'{"v": "1.0", "type": "action", "seq": 1, "game_id": "g", "action": "pass"}')
    arena.send(ident, make_request(2, "g", 0, view, view["legal_actions"], 50, 7))
    reply = parse_reply(arena.recv()[1])
    assert (reply.seq, reply.game_id, reply.action) == (2, "g", view["legal_actions"][-1])
    shut_down(arena, ident, bot)
    err = bot.stderr()
    assert "ignored Request before the welcome" in err
    assert "ignored a bad message from the arena (malformed)" in err
    assert "ignored a bad message from the arena (protocol)" in err
    assert [(e["n"], e["time_limit_ms"], e["bank_ms"]) for e in log_lines(err) if e["event"] == "act"] == [(1, 50, 7)]


def test_interleaved_games_get_one_bot_object_each(arena: FakeArena, spawn_bot: SpawnBot) -> None:
    bot = spawn_bot(LOGGING_BOT, "tok-log")
    ident, hello = handshake(arena, max_games=2)
    assert hello["capabilities"] == {"max_games": 4}
    games = [Game("a", seed=11, bot_seat=0), Game("b", seed=12, bot_seat=1)]
    assert drive(arena, ident, games, interleave=True) == 2  # two requests were outstanding
    shut_down(arena, ident, bot)
    events = log_lines(bot.stderr())
    inits = {e["game"]: (e["obj"], e["seat"]) for e in events if e["event"] == "init"}
    assert inits == {"a": (inits["a"][0], 0), "b": (inits["b"][0], 1)}
    assert inits["a"][0] != inits["b"][0]
    acts = [e for e in events if e["event"] == "act"]
    games_seen = [e["game"] for e in acts]
    first_b = games_seen.index("b")
    assert "a" in games_seen[first_b:]  # really interleaved, not one after the other
    for game in games:
        mine = [e for e in acts if e["game"] == game.game_id]
        assert {e["obj"] for e in mine} == {inits[game.game_id][0]}
        assert [e["n"] for e in mine] == list(range(1, len(mine) + 1))
        assert all(e["seat"] == game.bot_seat for e in mine)
        hands = [e for e in events if e["event"] == "hand_over" and e["game"] == game.game_id]
        assert [e["reason"] for e in hands] == [str(r.reason) for r in game.match.results]
        (over,) = [e for e in events if e["event"] == "match_over" and e["game"] == game.game_id]
        assert over["obj"] == inits[game.game_id][0]
        assert over["summary"]["score"] == list(game.match.score)
        assert over["summary"]["winner"] == game.match.winner


def test_interleaving_does_not_change_the_random_bots_moves(arena: FakeArena, spawn_bot: SpawnBot) -> None:
    """The same games give the same moves one at a time and interleaved (per-game seeding)."""
    seeds = {"p1": 21, "p2": 22, "p3": 23}

    def play(token: str, interleave: bool, **env: str) -> list[list[str]]:
        bot = spawn_bot(RANDOM_BOT, token, "--seed", "5", **env)
        ident, hello = handshake(arena, max_games=3 if interleave else 1)
        assert hello["capabilities"]["max_games"] == (16 if interleave else 1)
        games = [Game(gid, seed, bot_seat=seed % 2) for gid, seed in seeds.items()]
        most = drive(arena, ident, games, interleave=interleave)
        assert most == (3 if interleave else 1)
        shut_down(arena, ident, bot)
        return [g.actions for g in games]

    one_at_a_time = play("tok-seq", False, ARENA_MAX_GAMES="1")
    assert play("tok-int", True) == one_at_a_time


@pytest.mark.parametrize(
    ("crash_in", "where", "error"),
    [
        ("act", "act (seq 1)", "ValueError: boom in act"),
        ("init", "the constructor", "RuntimeError: boom in __init__"),
        ("hand_over", "on_hand_over", "KeyError: 'boom in on_hand_over'"),
    ],
)
def test_exception_in_bot_code_is_printed_and_ends_the_process(
    arena: FakeArena, spawn_bot: SpawnBot, crash_in: str, where: str, error: str
) -> None:
    bot = spawn_bot(LOGGING_BOT, f"tok-crash-{crash_in}", CRASH_IN=crash_in)
    ident, _ = handshake(arena)
    game = Game("c1", seed=4, bot_seat=0)
    if crash_in == "hand_over":
        view = game.match.view(0)
        view.update(to_move=None, legal_actions=[], result={
            "winner": 0, "game_points": 1, "reason": "declared", "totals": [66, 40], "tricks": [3, 2]})
        arena.send(ident, make_hand_over("c1", 0, view, (1, 0), 0))
    else:
        view = game.bot_view()
        assert view is not None
        arena.send(ident, make_request(1, "c1", 0, view, view["legal_actions"], 1000, 0))
    assert bot.wait() == EXIT_BOT_ERROR
    err = bot.stderr()
    assert f"exception in {where}, game 'c1'; exiting with status 1" in err
    assert "Traceback (most recent call last):" in err
    assert error in err


def test_reject_ends_the_process(arena: FakeArena, spawn_bot: SpawnBot) -> None:
    bot = spawn_bot(RANDOM_BOT, "tok-rejected")
    ident, _ = arena.recv()
    arena.send(ident, make_reject("bad_token", "not a token we issued"))
    assert bot.wait() == EXIT_REJECTED
    assert "rejected by the arena: bad_token: not a token we issued" in bot.stderr()


def test_a_silent_arena_ends_the_process(arena: FakeArena, spawn_bot: SpawnBot) -> None:
    bot = spawn_bot(RANDOM_BOT, "tok-idle", "--idle-timeout", "0.2")
    arena.recv()  # the hello, never answered
    assert bot.wait() == EXIT_ARENA_GONE
    assert "nothing from the arena for 0.2 s; exiting" in bot.stderr()


def test_a_dead_parent_ends_the_process(arena: FakeArena, ipc_dir: Any) -> None:
    """The bot's parent (a shell) exits after the hello: the bot notices and exits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_ENDPOINT=arena.endpoint, ARENA_TOKEN="tok-orphan", ARENA_IDLE_TIMEOUT_S="0")
    err_path = ipc_dir / "orphan.stderr"
    script = f'"{sys.executable}" bot.py >/dev/null 2>"{err_path}" & echo $!; read line; exit 0'
    with subprocess.Popen(["sh", "-c", script], cwd=RANDOM_BOT.parent, env=env,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE) as shell:
        assert shell.stdout is not None and shell.stdin is not None
        pid = int(shell.stdout.readline())
        pidfd = os.pidfd_open(pid)
        try:
            arena.recv()  # the hello: the bot has noted its parent by now
            shell.stdin.close()  # the shell's `read` returns and the shell exits
            assert shell.wait(timeout=WAIT_MS / 1000) == 0
            ready, _, _ = select.select([pidfd], [], [], WAIT_MS / 1000)
            if not ready:
                os.kill(pid, 9)
            assert ready, "the orphaned bot did not exit"
        finally:
            os.close(pidfd)
    assert "parent process is gone; exiting" in err_path.read_text()


def test_missing_endpoint_is_a_usage_error(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ARENA_ENDPOINT", raising=False)
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    assert serve(Bot, [], name="nobody") == EXIT_USAGE
    assert "nobody: no arena to connect to" in capsys.readouterr().err
    assert serve(Bot, ["--endpoint", "nowhere", "--token", "t"]) == EXIT_USAGE
    assert "cannot connect to 'nowhere'" in capsys.readouterr().err


def test_settings_flags_win_over_environment() -> None:
    env = {"ARENA_ENDPOINT": "ipc:///env", "ARENA_TOKEN": "envtok", "ARENA_MAX_GAMES": "3"}
    assert Settings.from_args(["--seed", "4"], env, 1) == Settings("ipc:///env", "envtok", 3, 600.0)
    argv = ["--endpoint", "tcp://h:1", "--token=flagtok", "--max-games", "2", "--idle-timeout", "0", "extra"]
    assert Settings.from_args(argv, env, 1) == Settings("tcp://h:1", "flagtok", 2, 0.0)
    assert Settings.from_args([], {"ARENA_ENDPOINT": "e", "ARENA_TOKEN": "t"}, 5).max_games == 5
    with pytest.raises(ValueError, match="max_games"):
        Settings.from_args(["--max-games", "0"], env, 1)
