"""Finished tournaments stored from real engine matches, without bot processes (for unit tests)."""

from __future__ import annotations

import random
from pathlib import Path

from arena.engine import Match, Rules
from arena.engine.deals import Deals
from arena.engine.records import EntrantRecord, HandRecord, MatchOutcome, Pair, TournamentSettings
from results.rows import MatchRow
from results.store import Store

# Two entrants, as a tournament's store enters them (the bots of every stored test tournament).
BOTS = (EntrantRecord(name="x", version="1", fingerprint="f", path="/x", label="x"),
        EntrantRecord(name="y", version="1", fingerprint="g", path="/y", label="y"))
RULES = Rules()
SETTINGS = TournamentSettings.from_dict({"rules": RULES.to_dict()})
PAIRS = 3


def played(seed: int, match_id: str) -> MatchOutcome:
    """A match played out by seeded random legal moves, as the runner stores it."""
    match = Match(RULES, seed=seed)
    rng = random.Random(match_id)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))
    return MatchOutcome(match_id=match_id, seed=seed, names=("x", "y"), rules=RULES, winner=match.winner,
                        score=match.score, forfeit=False, void=False, results=tuple(match.results),
                        records=tuple(HandRecord.of(r, RULES) for r in match.records))


def make_store(path: Path, deals: Deals, seeds: list[int] | None = None, *, finished: bool = True) -> Path:
    """A tournament of ``PAIRS`` stored pairs (marked finished unless told); ``seeds`` overrides
    what the deals would give."""
    seeds = seeds or [deals.pair_seed(i) for i in range(PAIRS)]
    with Store(path, create=True) as store:
        tid = store.create_tournament("t", deals.seed, SETTINGS, BOTS,
                                      [Pair(i, 0, 1, seeds[i]) for i in range(PAIRS)], deal_key=deals.key)
        for i in range(PAIRS):
            halves = [played(seeds[i], f"p{i:05d}h{h}") for h in (0, 1)]
            store.record_pair(tid, i, halves, [(0, 1), (1, 0)])
        if finished:
            store.finish_tournament(tid)
    return path


def match_row(pair_index: int, half: int, seats: tuple[int, int], winner_seat: int | None, void: bool = False, *,
              seed: int = 0) -> MatchRow:
    """A stored match row made up in code: ``seats`` are the entrants on seats 0 and 1."""
    return MatchRow(id=0, pair_index=pair_index, half=half, match_id=f"p{pair_index:05d}h{half}", seed=seed,
                    seat0=seats[0], seat1=seats[1], winner_seat=winner_seat, score0=0, score1=0, forfeit=False,
                    void=void, hands=0, interrupted_json=None)
