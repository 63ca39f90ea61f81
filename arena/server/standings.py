"""The ladder's live standings: TrueSkill over its stored results, without disabled bots.

Computed from the ladder's results store in schedule order (pair index, then half), as every
rating in the arena is; a disabled bot's matches (every version's) leave the computation, so
its opponents' ratings are as if it had never played. One line per bot: its newest accepted
version, with that version's rating and record.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.server.db import ServerDB
from results.ratings import PairResults, RatingEnv, rate_in_schedule_order
from results.store import Store

LADDER_DIR = "ladder"
LADDER_NAME = "ladder"


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

    @property
    def conservative(self) -> float:
        """mu - 3 sigma, the rank key."""
        return self.mu - 3.0 * self.sigma

    def to_dict(self) -> dict[str, Any]:
        """The API form (``bt`` stays null until the Bradley-Terry rankings reach the results package)."""
        return {"rank": self.rank, "bot": self.bot, "owner": self.owner, "version": self.version,
                "mu": round(self.mu, 4), "sigma": round(self.sigma, 4), "conservative": round(self.conservative, 4),
                "matches": self.matches, "wins": self.wins, "losses": self.losses, "bt": None}


@dataclass(frozen=True, slots=True)
class Board:
    """The whole leaderboard."""

    lines: list[Line]
    disabled: list[tuple[str, str, str]]   # bot, owner, reason
    pairs_done: int
    ratings: dict[int, tuple[float, float]] = field(default_factory=dict)  # every entrant's (mu, sigma)


def ladder_path(folder: Path) -> Path:
    """The ladder's results store."""
    return Path(folder) / LADDER_DIR / "arena.sqlite"


def build_board(store: Store, db: ServerDB, env: RatingEnv | None = None) -> Board:
    """The leaderboard from the ladder store and the server's bots (see the module doc)."""
    env = env or RatingEnv()
    tid = int(store.tournament()["id"])
    entrants = store.entrants(tid)
    bots = {b.name.lower(): b for b in db.bots()}
    excluded = {e["entrant"] for e in entrants if (bot := bots.get(str(e["name"]).lower())) and bot.disabled}
    wins = [0] * len(entrants)
    losses = [0] * len(entrants)
    by_pair: dict[int, PairResults] = {}
    for match in store.matches(tid):
        seats = (match["seat0"], match["seat1"])
        if excluded.intersection(seats):
            continue
        result = None
        if not match["void"] and match["winner_seat"] is not None:
            result = (seats[match["winner_seat"]], seats[1 - match["winner_seat"]])
            wins[result[0]] += 1
            losses[result[1]] += 1
        by_pair.setdefault(match["pair_index"], []).append(result)
    ratings = rate_in_schedule_order(env, len(entrants), list(by_pair.items()))
    by_label = {e["label"]: e["entrant"] for e in entrants}
    lines = []
    for sub in db.active_versions():
        entrant = by_label.get(label_of(sub.bot, sub.version))
        rating = ratings[entrant] if entrant is not None else env.initial()
        won, lost = (wins[entrant], losses[entrant]) if entrant is not None else (0, 0)
        lines.append(Line(0, sub.bot, sub.owner, sub.version, entrant, rating.mu, rating.sigma, won + lost, won, lost))
    lines.sort(key=lambda line: (-line.conservative, -line.mu, line.bot))
    ranked = [replace(line, rank=i) for i, line in enumerate(lines, 1)]
    disabled = [(b.name, b.owner, b.disabled_reason or "") for b in db.bots() if b.disabled]
    return Board(ranked, disabled, len(store.finished_pairs(tid)),
                 {e: (r.mu, r.sigma) for e, r in ratings.items()})


class BoardCache:
    """The leaderboard, recomputed only when the stored pairs or the bots changed."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._key: tuple[Any, ...] | None = None
        self._board: Board | None = None

    def board(self, db: ServerDB) -> Board:
        """The current leaderboard (an empty one before the ladder stored anything)."""
        path = ladder_path(self.folder)
        if not path.exists():  # the ladder has not started yet
            initial = RatingEnv().initial()
            return Board([Line(i, s.bot, s.owner, s.version, None, initial.mu, initial.sigma, 0, 0, 0)
                          for i, s in enumerate(db.active_versions(), 1)], [], 0)
        with Store(path, readonly=True, check_integrity=False) as store:
            key = (_pairs_key(store), tuple((b.name, b.disabled) for b in db.bots()),
                   tuple((s.bot, s.version) for s in db.active_versions()))
            with self._lock:
                if key != self._key or self._board is None:
                    self._board, self._key = build_board(store, db), key
                return self._board


def _pairs_key(store: Store) -> tuple[int, int]:
    row = store.db.execute("SELECT count(*), coalesce(max(id), 0) FROM matches").fetchone()
    return int(row[0]), int(row[1])

