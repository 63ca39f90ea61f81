"""The ladder's live standings: TrueSkill and Bradley-Terry over its stored results, without
disabled bots.

TrueSkill is computed in schedule order (pair index, then half), as every rating in the arena
is; the Bradley-Terry fit (``results.bradley_terry``, with its pair bootstrap) is one batch fit
over every decided match among the versions that played. A disabled bot's matches (every
version's) leave both, so its opponents' ratings are as if it had never played. One line per
bot: its newest accepted version, with that version's ratings and record (the Bradley-Terry
rank interval counts every version that played).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.server.db import ServerDB
from results.bradley_terry import BTStanding, bradley_terry
from results.pairgames import pair_games
from results.ratings import Rating, RatingEnv, rate_in_schedule_order, stored_pair_results
from results.store import Store

LADDER_DIR = "ladder"
LADDER_NAME = "ladder"
BOOTSTRAP = 200  # Bradley-Terry replicates of the live board (recomputed after every stored pair)


def label_of(bot: str, version: int) -> str:
    """The ladder entrant label of a bot version."""
    return f"{bot}@{version}"


@dataclass(frozen=True, slots=True)
class Line:
    """One bot on the leaderboard."""

    rank: int
    bot: str
    owner: str
    version: int
    entrant: int | None
    mu: float
    sigma: float
    matches: int
    wins: int
    losses: int
    bt: BTStanding | None = None

    @property
    def conservative(self) -> float:
        """mu - 3 sigma, the rank key."""
        return self.mu - 3.0 * self.sigma

    def to_dict(self) -> dict[str, Any]:
        """The API form; ``bt`` is ``{"elo", "elo_ci95", "rank_ci95", "p_top1"}`` (null before any game)."""
        bt = None if self.bt is None else {
            "elo": round(self.bt.elo, 1), "elo_ci95": [round(x, 1) for x in self.bt.elo_ci95],
            "rank_ci95": list(self.bt.rank_ci95), "p_top1": round(self.bt.p_top1, 3)}
        return {"rank": self.rank, "bot": self.bot, "owner": self.owner, "version": self.version,
                "mu": round(self.mu, 4), "sigma": round(self.sigma, 4), "conservative": round(self.conservative, 4),
                "matches": self.matches, "wins": self.wins, "losses": self.losses, "bt": bt}


@dataclass(frozen=True, slots=True)
class Board:
    """The whole leaderboard."""

    lines: list[Line]
    disabled: list[tuple[str, str, str]]   # bot, owner, reason
    pairs_done: int
    ratings: dict[int, Rating] = field(default_factory=dict)  # every entrant's


def ladder_path(folder: Path) -> Path:
    """The ladder's results store."""
    return Path(folder) / LADDER_DIR / "arena.sqlite"


def build_board(store: Store, db: ServerDB, env: RatingEnv | None = None, *, bootstrap: int = 0) -> Board:
    """The leaderboard from the ladder store and the server's bots (see the module doc);
    ``bootstrap`` > 0 adds the Bradley-Terry fit with that many replicates."""
    env = env or RatingEnv()
    tid = store.tournament().id
    entrants = store.entrants(tid)
    bots = {b.name.lower(): b for b in db.bots()}
    excluded = {e.number for e in entrants if (bot := bots.get(e.bot.name.lower())) and bot.disabled}
    wins = [0] * len(entrants)
    losses = [0] * len(entrants)
    included = [m for m in store.matches(tid) if not excluded.intersection(m.seats)]
    by_pair = stored_pair_results(included)
    for results in by_pair.values():
        for result in results:
            if result is not None:
                wins[result[0]] += 1
                losses[result[1]] += 1
    ratings = rate_in_schedule_order(env, len(entrants), list(by_pair.items()))
    bt = _bradley_terry(included, bootstrap) if bootstrap else {}
    by_label = {e.bot.label: e.number for e in entrants}
    lines = []
    for sub in db.active_versions():
        entrant = by_label.get(label_of(sub.bot, sub.version))
        rating = ratings[entrant] if entrant is not None else env.initial()
        won, lost = (wins[entrant], losses[entrant]) if entrant is not None else (0, 0)
        lines.append(Line(0, sub.bot, sub.owner, sub.version, entrant, rating.mu, rating.sigma, won + lost, won, lost,
                          bt.get(entrant) if entrant is not None else None))
    lines.sort(key=lambda line: (-line.conservative, -line.mu, line.bot))
    ranked = [replace(line, rank=i) for i, line in enumerate(lines, 1)]
    disabled = [(b.name, b.owner, b.disabled_reason or "") for b in db.bots() if b.disabled]
    return Board(ranked, disabled, len(store.finished_pairs(tid)), ratings)


def _bradley_terry(matches: list[Any], bootstrap: int) -> dict[int, BTStanding]:
    """The Bradley-Terry standing of every entrant that played one of ``matches``."""
    games = pair_games(matches)
    played = sorted({e for g in games for e in (g.a, g.b)})
    if len(played) < 2:
        return {}
    index = {entrant: i for i, entrant in enumerate(played)}
    fit = bradley_terry([replace(g, a=index[g.a], b=index[g.b]) for g in games], len(played), replicates=bootstrap)
    return {entrant: fit.standings[i] for entrant, i in index.items()}


class BoardCache:
    """The leaderboard, recomputed only when the stored pairs or the bots changed, and at most
    once per ``refresh_s`` while only new pairs arrive (a busy ladder stores several a second)."""

    def __init__(self, folder: Path, refresh_s: float = 1.0) -> None:
        self.folder = Path(folder)
        self.refresh_s = refresh_s
        self._lock = threading.Lock()
        self._key: tuple[Any, ...] | None = None
        self._board: Board | None = None
        self._at = 0.0

    def board(self, db: ServerDB) -> Board:
        """The current leaderboard (an empty one before the ladder stored anything)."""
        path = ladder_path(self.folder)
        if not path.exists():  # the ladder has not started yet
            return _empty_board(db)
        with Store(path, readonly=True, check_integrity=False) as store, store.read_transaction():
            if not store.has_tournament():  # the ladder is making its store right now
                return _empty_board(db)
            bots = (tuple((b.name, b.disabled) for b in db.bots()),
                    tuple((s.bot, s.version) for s in db.active_versions()))
            key = (_pairs_key(store), bots)
            with self._lock:
                fresh = self._board is not None and (key == self._key or (
                    self._key is not None and self._key[1] == bots and time.monotonic() - self._at < self.refresh_s))
                if not fresh:
                    self._board, self._key, self._at = build_board(store, db, bootstrap=BOOTSTRAP), key, time.monotonic()
                assert self._board is not None
                return self._board


def _empty_board(db: ServerDB) -> Board:
    """The board before the ladder stored anything: every active bot at the initial rating."""
    initial = RatingEnv().initial()
    return Board([Line(i, s.bot, s.owner, s.version, None, initial.mu, initial.sigma, 0, 0, 0)
                  for i, s in enumerate(db.active_versions(), 1)], [], 0)


def _pairs_key(store: Store) -> tuple[int, int]:
    row = store.db.execute("SELECT count(*), coalesce(max(id), 0) FROM matches").fetchone()
    return int(row[0]), int(row[1])

