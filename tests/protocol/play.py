"""A minimal arena side for tests: engine matches in which one seat is a bot over ZeroMQ.

The other seat plays locally from a seeded RNG. The driver checks that every reply echoes an
outstanding ``seq`` and its ``game_id``, and can keep one request outstanding per game at once
(interleaved) or one in total (one game after another).
"""

from __future__ import annotations

import random
from typing import Any, Callable

from arena.engine import Match, Rules
from protocol import make_hand_over, make_match_over, make_request, parse_reply

from .conftest import FakeArena

TIME_LIMIT_MS = 1000
BANK_MS = 10_000


class Game:
    """One match; the bot plays ``bot_seat``. ``outbox`` holds notifications still to send."""

    def __init__(self, game_id: str, seed: int, bot_seat: int) -> None:
        self.game_id = game_id
        self.bot_seat = bot_seat
        self.match = Match(Rules(), seed=seed)
        self.rng = random.Random(f"opponent:{game_id}")
        self.actions: list[str] = []
        self.outbox: list[bytes] = []
        self._start_hand()

    def _start_hand(self) -> None:
        self.hand = self.match.hand
        self.match_state = self.match.view(self.bot_seat)["match"]

    def apply(self, action: str) -> None:
        self.actions.append(action)
        result = self.match.apply(action)
        if result is None:
            return
        final = self.hand.view(self.bot_seat)
        final["match"] = self.match_state
        self.outbox.append(make_hand_over(self.game_id, self.bot_seat, final, self.match.score, self.match.carry))
        if self.match.is_over:
            self.outbox.append(
                make_match_over(
                    self.game_id, self.bot_seat, self.match.score, self.match.winner,
                    hands=len(self.match.results),
                )
            )
        else:
            self._start_hand()

    def bot_view(self) -> dict[str, Any] | None:
        """Play the local seat until the bot is to move; its view, or None once over."""
        while not self.match.is_over:
            seat = self.match.hand.to_move
            if seat == self.bot_seat:
                return self.match.view(seat)
            self.apply(self.rng.choice(self.match.legal_actions()))
        return None


def drive(
    arena: FakeArena,
    ident: bytes,
    games: list[Game],
    *,
    interleave: bool,
    first_seq: int = 1,
    check: Callable[[bytes], None] = lambda data: None,
) -> int:
    """Play ``games`` to the end against the bot ``ident``; returns the most requests that
    were outstanding at once. ``check`` sees every message sent to the bot."""

    def send(data: bytes) -> None:
        check(data)
        arena.send(ident, data)

    seq = first_seq
    outstanding: dict[int, Game] = {}
    active = list(games)
    most = 0
    while active or outstanding:
        for game in list(active):
            if game in outstanding.values():
                continue
            if outstanding and not interleave:
                break
            view = game.bot_view()
            for note in game.outbox:
                send(note)
            game.outbox.clear()
            if view is None:
                active.remove(game)
                continue
            send(make_request(seq, game.game_id, game.bot_seat, view, view["legal_actions"], TIME_LIMIT_MS, BANK_MS))
            outstanding[seq] = game
            seq += 1
        most = max(most, len(outstanding))
        if outstanding:
            _, data = arena.recv()
            reply = parse_reply(data)
            game = outstanding.pop(reply.seq)  # KeyError: a seq that is not outstanding
            assert reply.game_id == game.game_id
            game.apply(reply.action)  # IllegalAction: not a legal move
    return most
