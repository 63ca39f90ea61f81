"""Where a run's results go: the interface the runner writes through, filled in by the CLI.

The harness does not import ``results``. The runner is handed a ``Results``: the CLI and the
server's settle phase give it ``results.recording.Recording`` (see ``arena.commands.run``),
which keeps the tournament in its SQLite store and rates the pairs as they are stored. These
protocols say what the runner needs of it, and mypy checks the implementation against them
where the two are wired together.

A full disk is an ``OSError`` with ``errno.ENOSPC`` (or ``EDQUOT``) wherever it happens, in a
worker or in the store: ``disk_full`` recognises it.
"""

from __future__ import annotations

import errno
from collections.abc import Mapping, Sequence, Set
from typing import Protocol

from arena.engine.deals import Deals
from arena.engine.records import EntrantRecord, Pair, PairOutcome, TournamentSettings


class StoredEntrant(Protocol):
    """An entrant as the store holds it."""

    @property
    def bot(self) -> EntrantRecord:
        """The bot as it entered (its fingerprint: its folder's when the tournament started)."""
        ...

    @property
    def withdrawn(self) -> str | None:
        """Why its remaining pairs are refused (changed during the run), or None."""
        ...


class StoredTournament(Protocol):
    """A tournament as its store holds it when a run opens it (what a resume checks)."""

    @property
    def name(self) -> str: ...

    @property
    def settings(self) -> TournamentSettings:
        """The settings as stored (``TournamentConfig.settings``)."""
        ...

    @property
    def entrants(self) -> Sequence[StoredEntrant]:
        """By entrant number."""
        ...

    @property
    def runtime(self) -> Mapping[str, str] | None:
        """The digests of the project files the bots ran; None in a store made before they were kept."""
        ...

    @property
    def deals(self) -> Deals: ...

    @property
    def finished(self) -> bool:
        """Whether the tournament was marked finished."""
        ...

    @property
    def done(self) -> Set[int]:
        """The indices of the pairs stored."""
        ...


class Results(Protocol):
    """One tournament's results store, as a run writes it."""

    def stored(self) -> StoredTournament | None:
        """The tournament the store holds, or None if it holds none yet."""
        ...

    def create(self, name: str, seed: int, settings: TournamentSettings, entrants: Sequence[EntrantRecord],
               pairs: Sequence[Pair], deals: Deals, runtime: Mapping[str, str]) -> StoredTournament:
        """Store a new tournament: its settings, entrants (in entrant number order), whole schedule,
        deals and runtime digests."""
        ...

    def record_runtime(self, runtime: Mapping[str, str]) -> None:
        """Store the runtime digests of a tournament from before they were kept."""
        ...

    def record(self, pair: PairOutcome, scheduled: Pair, attempts: int, withdraw: Mapping[int, str]) -> None:
        """Store a played pair (``scheduled`` says who sat where), rated, with the entrants it
        withdraws, as one unit: if it raises, nothing of it is stored or rated."""
        ...

    def leader(self) -> int:
        """The entrant rated best so far."""
        ...

    def decided(self) -> bool:
        """Whether the tournament's stopping rule (if any) decided from the pairs stored."""
        ...

    def finish(self) -> None:
        """Mark the tournament finished."""
        ...

    def bytes_on_disk(self) -> int:
        """What the stored results take on disk (the free-space estimate scales it per pair)."""
        ...


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says the disk is full (or over quota)."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)
