"""The Python bot SDK: subclass ``Bot``, implement ``act``, call ``run(MyBot)``.

```python
from protocol.client import Bot, run

class FirstBot(Bot):
    name, version = "first", "1.0"

    def act(self, view, legal_actions):
        return legal_actions[0]

if __name__ == "__main__":
    run(FirstBot)
```

``run`` connects a ZeroMQ DEALER to the arena (``protocol.zmtp``: ZeroMQ's wire protocol in
the standard library; endpoint and token from ``--endpoint`` / ``--token`` or
``ARENA_ENDPOINT`` / ``ARENA_TOKEN``), does the handshake, answers every
request with the ``seq`` and ``game_id`` it came with, and makes one bot object per game
(``game_id``), so several interleaved games (``max_games > 1``) need nothing from the author.

An exception raised by the bot's own code (constructor, ``act`` or a hook) is printed to
stderr with its traceback, and the process then exits with status 1: the arena records a
``crash`` fault at once, with the traceback in the stderr tail, instead of waiting for a
timeout. The process also exits when the arena says ``shutdown`` (status 0), rejects the
hello (3), or seems gone (4): its parent process changed, the link closed, or it heard
nothing for ``--idle-timeout`` seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NoReturn, Protocol, Sequence, TextIO

from .codec import make_action, make_hello, parse_arena_message
from .errors import ProtocolError
from .messages import (
    MAX_GAMES_LIMIT,
    MAX_MESSAGE_BYTES,
    ArenaMessage,
    HandOver,
    MatchOver,
    Reject,
    Request,
    Shutdown,
    Welcome,
)
from .zmtp import Dealer

ENV_ENDPOINT = "ARENA_ENDPOINT"
ENV_TOKEN = "ARENA_TOKEN"
ENV_MAX_GAMES = "ARENA_MAX_GAMES"
ENV_IDLE_TIMEOUT = "ARENA_IDLE_TIMEOUT_S"
DEFAULT_IDLE_TIMEOUT_S = 600.0

EXIT_OK = 0
EXIT_BOT_ERROR = 1
EXIT_USAGE = 2
EXIT_REJECTED = 3
EXIT_ARENA_GONE = 4

_WAIT_S = 1.0  # how often a silent connection checks that the arena is still there
_RETRY_S = 0.1  # how often to try connecting while nobody listens
_SEND_TIMEOUT_S = 10.0
_HOLD_S = 0.001  # the longest a reply may wait for the replies after it (see _Session.handle)
_SLOWEST_DECAY = 0.9  # per request: after a slow act, no reply is held for some 60 requests or more


class Bot:
    """Base class of a bot: one object plays one game (match) as one seat.

    Class attributes ``name``, ``version`` and ``max_games`` go into the ``hello``.
    Before each ``act`` the SDK sets ``time_limit_ms`` and ``bank_ms`` from the request, and
    ``rules`` to the welcome's ``rules`` (the options that differ from the default profile).
    """

    name: str = "bot"
    version: str = "0"
    max_games: int = 1

    def __init__(self, game_id: str, seat: int) -> None:
        self.game_id = game_id
        self.seat = seat
        self.time_limit_ms = 0
        self.bank_ms = 0
        self.rules: dict[str, Any] = {}

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        """Return one of ``legal_actions`` for the position ``view`` (protocol/PROTOCOL.md section 6)."""
        raise NotImplementedError

    def on_hand_over(self, result: dict[str, Any], view: dict[str, Any]) -> None:
        """A hand ended: ``result`` is its HandResult object, ``view`` the final view."""

    def on_match_over(self, summary: dict[str, Any]) -> None:
        """The game ended: ``summary`` has game_id, seat, score, winner, hands, forfeit, fault."""


BotFactory = Callable[[str, int], Bot]


class Sender(Protocol):
    """Where replies go: the link to the arena (``protocol.zmtp.Dealer``)."""

    def hold(self, data: bytes) -> None: ...

    @property
    def holding(self) -> bool: ...

    def flush(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Settings:
    """How to reach the arena, from flags or environment variables (flags win)."""

    endpoint: str
    token: str
    max_games: int
    idle_timeout_s: float

    @classmethod
    def from_args(cls, argv: Sequence[str], env: Mapping[str, str], max_games: int) -> Settings:
        """Parse ``--endpoint --token --max-games --idle-timeout``; other arguments are left
        for the bot. Raises ``ValueError`` when the endpoint or token is missing or bad."""
        parser = argparse.ArgumentParser(add_help=False)
        parser.add_argument("--endpoint", default=env.get(ENV_ENDPOINT, ""))
        parser.add_argument("--token", default=env.get(ENV_TOKEN, ""))
        parser.add_argument("--max-games", default=env.get(ENV_MAX_GAMES, str(max_games)))
        parser.add_argument("--idle-timeout", default=env.get(ENV_IDLE_TIMEOUT, str(DEFAULT_IDLE_TIMEOUT_S)))
        args, _ = parser.parse_known_args(list(argv))
        if not args.endpoint or not args.token:
            raise ValueError(f"no arena to connect to: give --endpoint/--token or {ENV_ENDPOINT}/{ENV_TOKEN}")
        games = int(args.max_games)
        if not 1 <= games <= MAX_GAMES_LIMIT:
            raise ValueError(f"max_games must be in [1, {MAX_GAMES_LIMIT}], not {games}")
        return cls(args.endpoint, args.token, games, float(args.idle_timeout))


class _BotFailed(Exception):
    """The bot's own code raised; the traceback is already on stderr."""


class _Session:
    """One connection to the arena: the handshake, then the message loop."""

    def __init__(self, factory: BotFactory, settings: Settings, name: str, version: str, err: TextIO) -> None:
        self.factory = factory
        self.settings = settings
        self.name = name
        self.version = version
        self.err = err
        self.games: dict[str, Bot] = {}
        self.welcomed = False
        self.rules: dict[str, Any] = {}  # the welcome's non-default rule options
        self.parent = os.getppid()  # before the hello, so a parent that dies later is noticed
        self.clock: Callable[[], float] = time.perf_counter  # times the acts (tests give their own)
        self.held_since = 0.0  # the clock when the first reply held back was ready
        self.slowest_s = 1.0  # the slowest recent act, decayed: nothing is held until acts prove fast

    def say(self, text: str) -> None:
        print(f"[{self.name} pid {os.getpid()}] {text}", file=self.err, flush=True)

    def run(self) -> int:
        try:
            link = Dealer(self.settings.endpoint, self.settings.token.encode(), max_bytes=MAX_MESSAGE_BYTES,
                          recv_timeout_s=_WAIT_S, send_timeout_s=_SEND_TIMEOUT_S)
        except ValueError as exc:
            self.say(f"cannot connect to {self.settings.endpoint!r}: {exc}")
            return EXIT_USAGE
        try:
            code = self.connect(link)
            if code is not None:
                return code
            link.send(make_hello(self.settings.token, self.name, self.version, max_games=self.settings.max_games))
            return self.loop(link)
        except TimeoutError:  # a send: the arena read nothing for _SEND_TIMEOUT_S
            self.say("could not send to the arena; exiting")
            return EXIT_ARENA_GONE
        except ProtocolError as exc:  # the link itself (messages are checked in handle)
            self.say(f"lost the link to the arena: {exc}; exiting")
            return EXIT_ARENA_GONE
        except _BotFailed:
            return EXIT_BOT_ERROR
        finally:
            link.close()

    def connect(self, link: Dealer) -> int | None:
        """Connect, trying again every _RETRY_S while nobody listens (as a ZeroMQ socket
        would); an exit status if the arena seems gone meanwhile."""
        start = time.monotonic()
        while True:
            try:
                link.connect()
                return None
            except (OSError, TimeoutError):  # not listening yet, or no handshake in time
                pass
            if (code := self.gone(start)) is not None:
                return code
            time.sleep(_RETRY_S)

    def loop(self, link: Dealer) -> int:
        """Handle messages until one ends the session. A receive waits at most _WAIT_S: a
        queued message (several games' requests often arrive together) costs no wait, and
        only a second of silence raises, to check that the arena is still there. The replies
        held back leave before the loop waits."""
        buffered, recv, handle = link.buffered, link.recv, self.handle
        silent_since: float | None = None  # when the silence began, noted at its first timeout
        while True:
            data = buffered()
            if data is None:
                link.flush()  # a send's TimeoutError ends the session (``run``)
                try:
                    data = recv()
                except TimeoutError:
                    if silent_since is None:
                        silent_since = time.monotonic() - _WAIT_S
                    if (code := self.gone(silent_since)) is not None:
                        return code
                    continue
            silent_since = None
            code = handle(link, data)
            if code is not None:
                return code

    def gone(self, silent_since: float) -> int | None:
        """EXIT_ARENA_GONE if the parent process changed or nothing came for the idle timeout."""
        idle_s = self.settings.idle_timeout_s
        if os.getppid() != self.parent:
            self.say("parent process is gone; exiting")
            return EXIT_ARENA_GONE
        if idle_s > 0 and time.monotonic() - silent_since > idle_s:
            self.say(f"nothing from the arena for {idle_s:g} s; exiting")
            return EXIT_ARENA_GONE
        return None

    def handle(self, sock: Sender, data: bytes) -> int | None:
        """Act on one arena message; an exit status ends the session.

        A reply is held back (``sock.hold``), to leave in one write with the replies to the
        requests that arrived with it, only while the bot's acts are fast: before each act the
        replies held so far are sent unless they would still be under ``_HOLD_S`` old once this
        act is done, judged by the slowest recent act (an act includes the bot object's
        constructor, for a game's first request). Before any other bot code runs (a hook the bot
        overrides), they are sent.
        """
        try:
            msg = parse_arena_message(data)
        except ProtocolError as exc:
            self.say(f"ignored a bad message from the arena ({exc.code}): {exc}")
            return None
        if type(msg) is Request and self.welcomed:  # the per-decision path, first
            clock = self.clock
            began = clock()
            if sock.holding and began - self.held_since + self.slowest_s > _HOLD_S:
                sock.flush()
                began = clock()
            action = self.decide(msg)
            done = clock()
            self.slowest_s = max(done - began, self.slowest_s * _SLOWEST_DECAY)
            if not sock.holding:
                self.held_since = done
            sock.hold(make_action(msg.seq, msg.game_id, action))
            return None
        if self._runs_bot_code(msg):
            sock.flush()
        if isinstance(msg, Reject):
            self.say(f"rejected by the arena: {msg.reason}: {msg.detail}")
            return EXIT_REJECTED
        if isinstance(msg, Shutdown):
            return EXIT_OK
        if isinstance(msg, Welcome):
            self.welcomed = True
            self.rules = dict(msg.rules)
            return None
        if not self.welcomed:
            self.say(f"ignored {type(msg).__name__} before the welcome")
        elif isinstance(msg, HandOver):
            self.guard(msg.game_id, "on_hand_over", self.bot(msg.game_id, msg.seat).on_hand_over, msg.result, msg.view)
        elif isinstance(msg, MatchOver):
            bot = self.bot(msg.game_id, msg.seat)
            del self.games[msg.game_id]
            self.guard(msg.game_id, "on_match_over", bot.on_match_over, msg.summary())
        return None

    def _runs_bot_code(self, msg: ArenaMessage) -> bool:
        """Whether handling ``msg`` (not a request) may run the bot's own code: any message but a
        ``hand_over`` or ``match_over`` whose hook the game's bot object does not override."""
        if not self.welcomed or not isinstance(msg, (HandOver, MatchOver)):
            return True
        bot = self.games.get(msg.game_id)
        if bot is None:  # its constructor would run
            return True
        hook = "on_hand_over" if isinstance(msg, HandOver) else "on_match_over"
        return getattr(type(bot), hook, None) is not getattr(Bot, hook)

    def bot(self, game_id: str, seat: int) -> Bot:
        """The game's bot object, made when the game's first message arrives."""
        bot = self.games.get(game_id)
        if bot is None:
            bot = self.games[game_id] = self.guard(game_id, "the constructor", self.factory, game_id, seat)
        return bot

    def decide(self, req: Request) -> str:
        game_id, legal_actions = req.game_id, req.legal_actions
        bot = self.games.get(game_id)
        if bot is None:
            bot = self.bot(game_id, req.seat)
        bot.time_limit_ms, bot.bank_ms, bot.rules = req.time_limit_ms, req.bank_ms, self.rules
        try:
            action = bot.act(req.view, legal_actions)
        except Exception:
            raise self.failed(game_id, f"act (seq {req.seq})") from None
        if not isinstance(action, str):
            self.say(f"act returned {type(action).__name__}, not an action string, in game {game_id!r}")
            raise _BotFailed
        if action not in legal_actions:
            self.say(f"warning: act returned {action[:40]!r}, not in {legal_actions}; sending it anyway")
        return action

    def guard(self, game_id: str, where: str, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)``: bot code; on an exception print its traceback and end the process."""
        try:
            return call(*args)
        except Exception:
            raise self.failed(game_id, where) from None

    def failed(self, game_id: str, where: str) -> _BotFailed:
        """Print the exception being handled, raised by bot code in ``where``; the error that
        ends the process."""
        self.say(f"exception in {where}, game {game_id!r}; exiting with status {EXIT_BOT_ERROR}")
        traceback.print_exc(file=self.err)
        self.err.flush()
        return _BotFailed()


def serve(
    factory: BotFactory,
    argv: Sequence[str] | None = None,
    *,
    name: str | None = None,
    version: str | None = None,
    max_games: int | None = None,
    err: TextIO | None = None,
) -> int:
    """Play for the arena until it is done with us; returns the exit status.

    ``factory(game_id, seat)`` makes the bot object of a new game: usually a ``Bot``
    subclass, whose class attributes give the defaults of ``name``, ``version`` and
    ``max_games``. ``--max-games`` / ``ARENA_MAX_GAMES`` override ``max_games``.
    """
    out = err if err is not None else sys.stderr
    name = name if name is not None else str(getattr(factory, "name", "bot"))
    version = version if version is not None else str(getattr(factory, "version", "0"))
    games = max_games if max_games is not None else int(getattr(factory, "max_games", 1))
    try:
        settings = Settings.from_args(sys.argv[1:] if argv is None else argv, os.environ, games)
    except ValueError as exc:
        print(f"{name}: {exc}", file=out, flush=True)
        return EXIT_USAGE
    return _Session(factory, settings, name, version, out).run()


def run(factory: BotFactory, argv: Sequence[str] | None = None, **kwargs: Any) -> NoReturn:
    """``serve`` and exit with its status: the one call a bot script makes."""
    sys.exit(serve(factory, argv, **kwargs))
