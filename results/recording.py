"""A tournament's results as a run writes them: its store, its ratings and its stopping rule.

``Recording`` is what the runner writes through (``arena.sink.Results``; the CLI wires the
two). Each finished pair is committed in one transaction with the rating snapshots it
unlocks. A pair is rated from its rows as just stored (the same conversion a resume and the
leaderboard use); the snapshots are computed on a copy of the rater, which replaces the
rater only once the commit succeeded, so a failed or interrupted commit leaves both as they were. A
resumed run restores the rater from the last stored snapshot plus the pairs stored beyond
it, so it rates exactly as an uninterrupted run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from arena.engine.deals import Deals
from arena.engine.records import EntrantRecord, Pair, PairOutcome, TournamentSettings

from .errors import StoreError
from .ratings import Rating, RatingEnv, ScheduleRater, stored_pair_results
from .rows import StoredEntrant
from .store import Store


class StopRule(Protocol):
    """Decides from the stored results whether a tournament may end before its schedule does."""

    def decided(self, store: Store, tid: int) -> bool:
        """True once the tournament is decided."""
        ...


@dataclass(frozen=True, slots=True)
class StoredTournament:
    """A tournament as its store holds it when a run opens it."""

    name: str
    settings: TournamentSettings
    entrants: tuple[StoredEntrant, ...]
    runtime: Mapping[str, str] | None
    deals: Deals
    finished: bool
    done: frozenset[int]


class Recording:
    """One output folder's results store, opened (or created) for a run; a context manager.

    ``stop_rule`` (``arena sprt``'s test) is asked by ``decided``; ``env`` rates the pairs.
    """

    def __init__(self, path: Path, *, stop_rule: StopRule | None = None, env: RatingEnv | None = None) -> None:
        self.store = Store(path, create=True)
        self.stop_rule = stop_rule
        self.env = env or RatingEnv()
        self._tid: int | None = None
        self._rater: ScheduleRater | None = None

    def __enter__(self) -> Recording:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the store (idempotent)."""
        self.store.close()

    @property
    def tid(self) -> int:
        """The tournament's id (once ``stored`` found it or ``create`` made it)."""
        if self._tid is None:
            raise StoreError(f"{self.store.path}: no tournament opened yet")
        return self._tid

    @property
    def rater(self) -> ScheduleRater:
        """The ratings over the pairs stored, in schedule order."""
        if self._rater is None:
            self._rater = self._restore_rater()
        return self._rater

    def stored(self) -> StoredTournament | None:
        """The tournament the store holds, or None if it holds none yet."""
        if not self.store.has_tournament():
            return None
        row = self.store.tournament()
        self._tid = tid = row.id
        return StoredTournament(
            name=row.name, settings=row.settings, entrants=tuple(self.store.entrants(tid)),
            runtime=self.store.runtime(tid), deals=self.store.deals(tid), finished=row.finished_at is not None,
            done=frozenset(self.store.finished_pairs(tid)))

    def create(self, name: str, seed: int, settings: TournamentSettings, entrants: Sequence[EntrantRecord],
               pairs: Sequence[Pair], deals: Deals, runtime: Mapping[str, str]) -> StoredTournament:
        """Store a new tournament with its runtime digests; what the store now holds of it."""
        self._tid = self.store.create_tournament(name, seed, settings, entrants, pairs, deal_key=deals.key)
        self.record_runtime(runtime)
        stored = self.stored()
        assert stored is not None
        return stored

    def record_runtime(self, runtime: Mapping[str, str]) -> None:
        """Store the digests of the project files the bots run."""
        self.store.record_runtime(self.tid, dict(runtime))

    def record(self, pair: PairOutcome, scheduled: Pair, attempts: int, withdraw: Mapping[int, str]) -> None:
        """Store a played pair with its rating snapshots and the entrants it withdraws, as one unit
        (StoreError, DiskFullError: then nothing changed, the ratings neither)."""
        index, trial = pair.pair_index, self.rater.copy()
        with self.store.transaction():
            for entrant, why in withdraw.items():
                self.store.withdraw(self.tid, entrant, why)
            self.store.record_pair(self.tid, index, pair.outcomes, [scheduled.seats(0), scheduled.seats(1)],
                                   attempts=attempts)
            stored = stored_pair_results(self.store.matches(self.tid, index))
            self.store.record_snapshots(self.tid, trial.add(index, stored[index]))
        self._rater = trial

    def leader(self) -> int:
        """The entrant with the best conservative rating (then mu)."""
        ratings = self.rater.ratings
        return max(ratings, key=lambda e: (ratings[e].conservative, ratings[e].mu))

    def decided(self) -> bool:
        """Whether the stopping rule decided (never without one)."""
        return self.stop_rule is not None and self.stop_rule.decided(self.store, self.tid)

    def finish(self) -> None:
        """Mark the tournament finished."""
        self.store.finish_tournament(self.tid)

    def bytes_on_disk(self) -> int:
        """What the store takes on disk."""
        return self.store.bytes_on_disk()

    def _restore_rater(self) -> ScheduleRater:
        """The rater at its last stored snapshot, fed with the pairs stored beyond it."""
        tid = self.tid
        rater = ScheduleRater(self.env, len(self.store.entrants(tid)))
        snapshots = self.store.snapshots(tid)
        if snapshots:
            last = snapshots[-1].after_pair
            rater.restore(last, {r.entrant: Rating(r.mu, r.sigma) for r in snapshots if r.after_pair == last})
        for index, results in sorted(stored_pair_results(self.store.matches(tid)).items()):
            if index >= rater.frontier:
                rater.add(index, results)
        return rater

