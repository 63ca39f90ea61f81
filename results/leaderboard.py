"""The leaderboard, crosstable and decision-time figures, all derived from the store.

One source of truth for every view of the rankings: the terminal table, the JSON and CSV
exports and the HTML report all read ``Leaderboard``.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from .ratings import PairResults, RatingEnv, rate_in_schedule_order
from .store import Store

SCHEMA_VERSION = 1


@dataclass(slots=True)
class Standing:
    """One entrant's line."""

    rank: int
    entrant: int
    bot: str
    name: str
    version: str
    mu: float
    sigma: float
    conservative: float
    matches: int
    wins: int
    losses: int
    score_pct: float
    game_points: int
    hands: int
    points_per_hand: float
    faults: int
    forfeits: int
    think_p50_ms: float | None
    think_p99_ms: float | None
    think_max_ms: float | None


@dataclass(slots=True)
class Leaderboard:
    """Standings in rank order plus the head-to-head table."""

    tournament: str
    pairs_total: int
    pairs_done: int
    standings: list[Standing]
    crosstable: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    deals: str = "secret"
    deal_commitment: str | None = None  # sha256 of the secret deal key; None for public deals

    def to_dict(self) -> dict[str, Any]:
        """JSON export (with a schema version, as every export carries)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "tournament": self.tournament,
            "pairs_total": self.pairs_total,
            "pairs_done": self.pairs_done,
            "standings": [asdict(s) for s in self.standings],
            "crosstable": self.crosstable,
            "deals": self.deals,
            "deal_commitment": self.deal_commitment,
        }

    def deals_line(self) -> str:
        """What the deals were, for people: committed to in advance, or predictable."""
        if self.deal_commitment is None:
            return ("deals: PUBLIC, derived from the tournament seed and predictable by anyone who knows "
                    "or guesses it (a development run)")
        return f"deals: secret, committed to in advance as sha256(key) = {self.deal_commitment}"

    def to_json(self) -> str:
        """The JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def to_csv(self) -> str:
        """The standings as CSV."""
        out = io.StringIO()
        names = list(Standing.__dataclass_fields__)
        writer = csv.DictWriter(out, fieldnames=names)
        writer.writeheader()
        for standing in self.standings:
            writer.writerow(asdict(standing))
        return out.getvalue()

    def table(self) -> str:
        """A fixed-width table for the terminal."""
        header = ["#", "bot", "mu", "sigma", "mu-3s", "matches", "W-L", "score%", "pts/hand", "faults"]
        rows = [
            [str(s.rank), s.bot, f"{s.mu:.2f}", f"{s.sigma:.2f}", f"{s.conservative:.2f}", str(s.matches),
             f"{s.wins}-{s.losses}", f"{s.score_pct:.1f}", f"{s.points_per_hand:.3f}", str(s.faults)]
            for s in self.standings
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines = ["  ".join(c.ljust(w) if i == 1 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 for r in [header, *rows]]
        lines.insert(1, "-" * len(lines[0]))
        title = f"{self.tournament}: {self.pairs_done}/{self.pairs_total} pairs"
        return "\n".join([title, self.deals_line(), *lines])

    def crosstable_text(self) -> str:
        """Head-to-head score % (row against column) with match counts."""
        bots = [s.bot for s in self.standings]
        width = max(len(b) for b in bots)
        lines = [" " * width + "  " + "  ".join(b[:10].rjust(10) for b in bots)]
        for row in bots:
            cells = []
            for col in bots:
                cell = self.crosstable.get(row, {}).get(col)
                cells.append("—".rjust(10) if row == col or not cell or not cell["matches"]
                             else f"{100 * cell['wins'] / cell['matches']:.0f}% /{cell['matches']}".rjust(10))
            lines.append(row.ljust(width) + "  " + "  ".join(cells))
        return "\n".join(lines)


def _percentile(ordered: list[float], q: float) -> float | None:
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def build_leaderboard(store: Store, env: RatingEnv | None = None) -> Leaderboard:
    """Everything the rankings show, computed from the stored results."""
    env = env or RatingEnv()
    tournament = store.tournament()
    tid = tournament["id"]
    entrants = store.entrants(tid)
    labels = [e["label"] for e in entrants]
    n = len(entrants)
    wins, losses, forfeits = [0] * n, [0] * n, [0] * n
    points, hands = [0] * n, [0] * n
    cross = {a: {b: {"wins": 0, "matches": 0} for b in labels if b != a} for a in labels}
    by_pair: dict[int, PairResults] = {}
    for match in store.matches(tid):
        seats = (match["seat0"], match["seat1"])
        result = None
        if not match["void"] and match["winner_seat"] is not None:
            winner, loser = seats[match["winner_seat"]], seats[1 - match["winner_seat"]]
            result = (winner, loser)
            wins[winner] += 1
            losses[loser] += 1
            forfeits[loser] += match["forfeit"]
            cross[labels[winner]][labels[loser]]["wins"] += 1
            cross[labels[winner]][labels[loser]]["matches"] += 1
            cross[labels[loser]][labels[winner]]["matches"] += 1
        by_pair.setdefault(match["pair_index"], []).append(result)
    for hand in store.all_hands(tid):
        seats = (hand["seat0"], hand["seat1"])
        hands[seats[0]] += 1
        hands[seats[1]] += 1
        if hand["winner_seat"] is not None:
            points[seats[hand["winner_seat"]]] += hand["game_points"]
    faults = [0] * n
    for fault in store.faults(tid):
        if fault["entrant"] is not None and fault["kind"] != "harness":
            faults[fault["entrant"]] += 1
    times: list[list[float]] = [[] for _ in range(n)]
    for row in store.think_times(tid):
        times[row["entrant"]].extend(json.loads(row["times_ms_json"]))
    ratings = rate_in_schedule_order(env, n, list(by_pair.items()))
    deals = store.deals(tid)
    standings = []
    for e, entrant in enumerate(entrants):
        played = wins[e] + losses[e]
        ordered = sorted(times[e])
        standings.append(Standing(
            rank=0, entrant=e, bot=entrant["label"], name=entrant["name"], version=entrant["version"],
            mu=ratings[e].mu, sigma=ratings[e].sigma, conservative=ratings[e].conservative,
            matches=played, wins=wins[e], losses=losses[e], score_pct=100.0 * wins[e] / played if played else 0.0,
            game_points=points[e], hands=hands[e], points_per_hand=points[e] / hands[e] if hands[e] else 0.0,
            faults=faults[e], forfeits=forfeits[e], think_p50_ms=_percentile(ordered, 0.5),
            think_p99_ms=_percentile(ordered, 0.99), think_max_ms=ordered[-1] if ordered else None,
        ))
    standings.sort(key=lambda s: (-s.conservative, -s.mu, s.bot))
    for rank, standing in enumerate(standings, 1):
        standing.rank = rank
    return Leaderboard(
        tournament=tournament["name"],
        pairs_total=len(store.pairs(tid)),
        pairs_done=len(store.finished_pairs(tid)),
        standings=standings,
        crosstable=cross,
        deals=str(deals.mode),
        deal_commitment=deals.commitment,
    )
