"""In-process duplicate play between two bot factories, for ``bench/ladder.py`` and tests.

A *pair* is two matches with the same seed, seats swapped. Every deal of either match is
played with both seatings: a deal that only the longer match reached is replayed as a lone
hand (same deck and dealer, seats swapped), so each deal counts twice. Bots are called
exactly as the arena calls them (``act(view, view["legal_actions"])`` with ``Match.view``),
but in this process, and the time of every ``act`` is recorded per bot.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from arena.engine import Hand, Match, Rules, match_deck


class Policy(Protocol):
    """What the duel needs from a bot object."""

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str: ...


Factory = Callable[[str, int], Policy]


@dataclass
class Tally:
    """Results of a match-up from A's side, one entry per pair or per duplicate deal."""

    deal_wins: list[float] = field(default_factory=list)   # per deal: A's mean win share over both seatings
    deal_points: list[float] = field(default_factory=list)  # per deal: A's mean game-point margin
    match_wins: list[float] = field(default_factory=list)  # per pair: A's share of the two matches
    ties: int = 0
    think: dict[str, list[float]] = field(default_factory=dict)  # bot name -> seconds per decision

    def add_time(self, name: str, seconds: float) -> None:
        self.think.setdefault(name, []).append(seconds)


def mean_ci(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% normal interval."""
    if not values:
        return math.nan, math.nan
    m = statistics.fmean(values)
    if len(values) < 2:
        return m, math.nan
    return m, 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def _outcome(winner: int | None, points: int, a_seat: int) -> tuple[float, int]:
    """A's win share (1, 0.5, 0) and signed game points for one hand."""
    if winner is None:
        return 0.5, 0
    return (1.0, points) if winner == a_seat else (0.0, -points)


def _decide(bot: Policy, view: dict[str, Any], name: str, tally: Tally) -> str:
    start = time.perf_counter()
    action = bot.act(view, view["legal_actions"])
    tally.add_time(name, time.perf_counter() - start)
    return action


def _lone_hand(a: Factory, b: Factory, names: tuple[str, str], deck: list[str], dealer: int, a_seat: int,
               rules: Rules, game_id: str, tally: Tally) -> tuple[float, int]:
    """Play one hand outside a match (A in ``a_seat``); A's outcome."""
    hand = Hand.deal(deck, dealer, rules)
    bots = [a(game_id, 0) if a_seat == 0 else b(game_id, 0), b(game_id, 1) if a_seat == 0 else a(game_id, 1)]
    labels = (names[0], names[1]) if a_seat == 0 else (names[1], names[0])
    while not hand.is_over:
        seat = hand.to_move
        assert seat is not None
        hand.apply(_decide(bots[seat], hand.view(seat), labels[seat], tally))
    result = hand.result
    assert result is not None
    return _outcome(result.winner, result.game_points, a_seat)


def play_pair(a: Factory, b: Factory, names: tuple[str, str], seed: Any, rules: Rules, tally: Tally) -> None:
    """Play one duplicate pair of matches (A first in seat 0, then in seat 1) into ``tally``."""
    per_half: list[dict[int, tuple[float, int]]] = [{}, {}]
    dealers: dict[int, int] = {}
    match_wins = 0.0
    for a_seat in (0, 1):
        match = Match(rules, seed)
        game_id = f"{seed}:{a_seat}"
        bots = [a(game_id, 0), b(game_id, 1)] if a_seat == 0 else [b(game_id, 0), a(game_id, 1)]
        labels = (names[0], names[1]) if a_seat == 0 else (names[1], names[0])
        while not match.is_over:
            seat = match.to_move
            assert seat is not None
            index, dealer = match.hand_index, match.hand.dealer
            result = match.apply(_decide(bots[seat], match.view(seat), labels[seat], tally))
            if result is not None:
                per_half[a_seat][index] = _outcome(result.winner, result.game_points, a_seat)
                dealers[index] = dealer
        match_wins += 0.5 if match.winner == a_seat else 0.0
    tally.match_wins.append(match_wins)
    for index in sorted(dealers):
        for a_seat in (0, 1):
            if index not in per_half[a_seat]:
                per_half[a_seat][index] = _lone_hand(
                    a, b, names, match_deck(seed, index), dealers[index], a_seat, rules,
                    f"{seed}:{a_seat}:lone{index}", tally)
        (w0, p0), (w1, p1) = per_half[0][index], per_half[1][index]
        tally.ties += (w0 == 0.5) + (w1 == 0.5)
        tally.deal_wins.append((w0 + w1) / 2)
        tally.deal_points.append((p0 + p1) / 2)


def duel(a: Factory, b: Factory, names: tuple[str, str], *, deals: int, seed: str = "ladder",
         rules: Rules | None = None, tally: Tally | None = None,
         progress: Callable[[Tally], None] | None = None) -> Tally:
    """Play pairs (seeds ``f"{seed}:{k}"``) until at least ``deals`` duplicate deals are done."""
    rules = rules or Rules()
    tally = tally or Tally()
    k = len(tally.match_wins)
    while len(tally.deal_wins) < deals:
        play_pair(a, b, names, f"{seed}:{k}", rules, tally)
        k += 1
        if progress is not None:
            progress(tally)
    return tally
