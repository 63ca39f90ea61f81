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

import numpy as np

from .bradley_terry import PRIOR, BTFit, BTStanding, bradley_terry
from .bt_defaults import DEFAULT_REPLICATES, DEFAULT_SEED, DEFAULT_TOP_K
from .pairgames import pair_games, stored_result
from .pairstats import PairStats, head_to_head
from .ratings import RatingEnv, rate_in_schedule_order, stored_pair_results
from .store import Store

RATINGS = ("bt", "trueskill")
RATING_NAMES = {"bt": "Bradley-Terry Elo (batch fit of every decided match, bootstrap 95% intervals)",
                "trueskill": "TrueSkill mu - 3 sigma (applied in schedule order)"}

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
    bt: BTStanding
    p_top_k: float  # bootstrap P(rank <= the leaderboard's top_k)
    cpu_p50_ms: float | None = None  # the same figures for the CPU time of each decision
    cpu_p99_ms: float | None = None
    cpu_max_ms: float | None = None


@dataclass(slots=True)
class Leaderboard:
    """Standings in rank order plus the head-to-head table."""

    tournament: str
    pairs_total: int
    pairs_done: int
    standings: list[Standing]
    crosstable: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    deals: str = "secret"
    deal_commitment: str | None = None  # sha256 of the secret deal key; None for public deals
    ranked_by: str = "bt"
    finished: bool = False
    top_k: int = DEFAULT_TOP_K
    bootstrap: int = DEFAULT_REPLICATES
    bootstrap_seed: int = DEFAULT_SEED
    p_better: dict[str, dict[str, float | None]] = field(default_factory=dict)  # [row][col]: P(row better)
    tied_groups: list[list[str]] = field(default_factory=list)

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
            "ranked_by": self.ranked_by,
            "bt_model": {"unit": "match", "prior": PRIOR, "bootstrap": self.bootstrap, "seed": self.bootstrap_seed},
            "bt_top_k": self.top_k,
            "bt_p_better": self.p_better,
            "bt_tied_groups": self.tied_groups,
        }

    def ranked_line(self) -> str:
        """Which rating orders the standings."""
        state = "finished" if self.finished else "running"
        return f"ranked by {RATING_NAMES[self.ranked_by]}; tournament {state}"

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
        """The standings as CSV (the ``bt`` object flattened to ``bt_*`` columns)."""
        out = io.StringIO()
        names = [n for n in Standing.__dataclass_fields__ if n != "bt"] + list(_bt_columns(None))
        writer = csv.DictWriter(out, fieldnames=names)
        writer.writeheader()
        for standing in self.standings:
            row = asdict(standing)
            del row["bt"]
            writer.writerow({**row, **_bt_columns(standing.bt)})
        return out.getvalue()

    def table(self) -> str:
        """A fixed-width table for the terminal."""
        header = ["#", "bot", "elo", "elo 95%", "rank 95%", "P(#1)", "mu", "sigma", "mu-3s", "matches", "W-L",
                  "score%", "pts/hand", "faults"]
        rows = [
            [str(s.rank), s.bot, f"{s.bt.elo:.0f}", f"{s.bt.elo_ci95[0]:.0f}..{s.bt.elo_ci95[1]:.0f}",
             f"{s.bt.rank_ci95[0]}-{s.bt.rank_ci95[1]}", f"{s.bt.p_top1:.2f}", f"{s.mu:.2f}", f"{s.sigma:.2f}",
             f"{s.conservative:.2f}", str(s.matches), f"{s.wins}-{s.losses}", f"{s.score_pct:.1f}",
             f"{s.points_per_hand:.3f}", str(s.faults)]
            for s in self.standings
        ]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        lines = ["  ".join(c.ljust(w) if i == 1 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 for r in [header, *rows]]
        lines.insert(1, "-" * len(lines[0]))
        title = f"{self.tournament}: {self.pairs_done}/{self.pairs_total} pairs"
        tied = "; ".join(" = ".join(group) for group in self.tied_groups) or "none"
        return "\n".join([title, self.ranked_line(), self.deals_line(), *lines,
                          f"statistically tied (overlapping rank intervals): {tied}"])

    def crosstable_text(self) -> str:
        """Head-to-head score % (row against column) with match counts, then the pair statistics."""
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
        lines += ["", "pairs (2-0 / 1-1 / 0-2), score, Elo with 95% interval, LOS:"]
        for i, row in enumerate(bots):
            for col in bots[i + 1:]:
                stats = self.crosstable.get(row, {}).get(col, {}).get("pairs")
                if stats and stats["won"] + stats["split"] + stats["lost"]:
                    lines.append(f"  {row} vs {col}: {_pair_text(stats)}")
        return "\n".join(lines)


def _bt_columns(bt: BTStanding | None) -> dict[str, Any]:
    """The CSV columns of a ``bt`` object (None: just the names)."""
    names = ("bt_elo", "bt_elo_lo", "bt_elo_hi", "bt_rank_lo", "bt_rank_hi", "bt_p_top1")
    if bt is None:
        return dict.fromkeys(names)
    return dict(zip(names, (bt.elo, *bt.elo_ci95, *bt.rank_ci95, bt.p_top1)))


def elo_text(elo: float | None, score: float) -> str:
    """An Elo difference for people; None is infinite, with the sign of its score."""
    if elo is None:
        return "+inf" if score > 0.5 else "-inf"
    return f"{elo:+.0f}"


def _pair_text(stats: dict[str, Any]) -> str:
    (lo, hi), (score_lo, score_hi) = stats["elo_ci95"], stats["score_ci95"]
    return (f"{stats['won']}/{stats['split']}/{stats['lost']}, score {100 * stats['score']:.1f}%, "
            f"Elo {elo_text(stats['elo'], stats['score'])} [{elo_text(lo, score_lo)}, {elo_text(hi, score_hi)}], "
            f"LOS {100 * stats['los']:.1f}%")


def pair_cell(stats: PairStats) -> dict[str, Any]:
    """A crosstable cell's ``pairs`` object."""
    return {"won": stats.won, "split": stats.split, "lost": stats.lost, "score": stats.score,
            "score_ci95": list(stats.score_ci95), "elo": stats.elo, "elo_ci95": list(stats.elo_ci95), "los": stats.los}


def _order_stats(values: list[float]) -> tuple[float | None, float | None, float | None]:
    """The p50, p99 and largest of ``values``: the element at index ``int(q * n)`` (at most the
    last) of them in order, found by ``np.partition`` without sorting them all (a tournament's
    decision times are tens of thousands per bot); None each when there are none."""
    if not values:
        return None, None, None
    n = len(values)
    at = [min(n - 1, int(q * n)) for q in (0.5, 0.99)] + [n - 1]
    p50, p99, largest = np.partition(np.array(values, dtype=np.float64), at)[at].tolist()
    return p50, p99, largest


def build_leaderboard(store: Store, env: RatingEnv | None = None, *, rating: str | None = None,
                      bootstrap: int = DEFAULT_REPLICATES, seed: int = DEFAULT_SEED,
                      top_k: int = DEFAULT_TOP_K) -> Leaderboard:
    """Everything the rankings show, computed from the stored results.

    ``rating`` orders the standings: ``"bt"`` or ``"trueskill"``; None means ``bt`` once the
    tournament is finished and ``trueskill`` while it runs.
    """
    if rating is not None and rating not in RATINGS:
        raise ValueError(f"rating must be one of {', '.join(RATINGS)}, not {rating!r}")
    env = env or RatingEnv()
    tournament = store.tournament()
    tid = tournament.id
    entrants = store.entrants(tid)
    labels = [e.bot.label for e in entrants]
    n = len(entrants)
    wins, losses, forfeits = [0] * n, [0] * n, [0] * n
    points, hands = [0] * n, [0] * n
    cross: dict[str, dict[str, dict[str, Any]]] = {
        a: {b: {"wins": 0, "matches": 0} for b in labels if b != a} for a in labels}
    matches = store.matches(tid)
    for match in matches:
        result = stored_result(match)
        if result is not None:
            winner, loser = result
            wins[winner] += 1
            losses[loser] += 1
            forfeits[loser] += match.forfeit
            cross[labels[winner]][labels[loser]]["wins"] += 1
            cross[labels[winner]][labels[loser]]["matches"] += 1
            cross[labels[loser]][labels[winner]]["matches"] += 1
    for seating in store.seating_hands(tid):
        hands[seating.seat0] += seating.hands
        hands[seating.seat1] += seating.hands
        points[seating.seat0] += seating.points0
        points[seating.seat1] += seating.points1
    counted = store.fault_counts(tid)
    faults = [counted.get(entrant, 0) for entrant in range(n)]
    times: list[list[float]] = [[] for _ in range(n)]
    cpu_times: list[list[float]] = [[] for _ in range(n)]
    for row in store.think_times(tid):
        times[row.entrant].extend(row.wall_ms)
        cpu_times[row.entrant].extend(ms for ms in row.cpu_ms or () if ms is not None)
    ratings = rate_in_schedule_order(env, n, list(stored_pair_results(matches).items()))
    games = pair_games(matches)
    fit = bradley_terry(games, n, replicates=bootstrap, seed=seed, top_k=top_k)
    for (first, second), stats in head_to_head(games).items():
        cross[labels[first]][labels[second]]["pairs"] = pair_cell(stats)
    deals = store.deals(tid)
    standings = []
    for e, entrant in enumerate(entrants):
        played = wins[e] + losses[e]
        think, cpu = _order_stats(times[e]), _order_stats(cpu_times[e])
        standings.append(Standing(
            rank=0, entrant=e, bot=entrant.bot.label, name=entrant.bot.name, version=entrant.bot.version,
            mu=ratings[e].mu, sigma=ratings[e].sigma, conservative=ratings[e].conservative,
            matches=played, wins=wins[e], losses=losses[e], score_pct=100.0 * wins[e] / played if played else 0.0,
            game_points=points[e], hands=hands[e], points_per_hand=points[e] / hands[e] if hands[e] else 0.0,
            faults=faults[e], forfeits=forfeits[e], think_p50_ms=think[0], think_p99_ms=think[1],
            think_max_ms=think[2], bt=fit.standings[e], p_top_k=fit.p_top_k[e],
            cpu_p50_ms=cpu[0], cpu_p99_ms=cpu[1], cpu_max_ms=cpu[2],
        ))
    finished = tournament.finished_at is not None
    ranked_by = rating or ("bt" if finished else "trueskill")
    if ranked_by == "bt":
        standings.sort(key=lambda s: (-s.bt.elo, -s.conservative, s.bot))
    else:
        standings.sort(key=lambda s: (-s.conservative, -s.mu, s.bot))
    for rank, standing in enumerate(standings, 1):
        standing.rank = rank
    return Leaderboard(
        tournament=tournament.name,
        pairs_total=len(store.pairs(tid)),
        pairs_done=len(store.finished_pairs(tid)),
        standings=standings,
        crosstable=cross,
        deals=str(deals.mode),
        deal_commitment=deals.commitment,
        ranked_by=ranked_by,
        finished=finished,
        top_k=top_k,
        bootstrap=bootstrap,
        bootstrap_seed=seed,
        p_better=_p_better(fit, labels),
        tied_groups=[[labels[e] for e in group] for group in fit.tied_groups],
    )


def _p_better(fit: BTFit, labels: list[str]) -> dict[str, dict[str, float | None]]:
    return {labels[i]: {labels[j]: p for j, p in enumerate(row) if j != i} for i, row in enumerate(fit.p_better)}
