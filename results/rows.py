"""What the results store's reads return: typed rows, one record per table row it reads.

The store (``results.store``) selects the columns and builds these; everything that reads
stored results (the ratings, ``verify``, the leaderboard, the report, the CLI, the server's
views) reads their attributes. Hand records are kept as JSON text in their rows and read with
``hand_record`` where they are needed, so a malformed one is reported where it is read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena.engine import HandResult, Reason
from arena.engine.records import EntrantRecord, HandRecord, Pair, TournamentSettings

from .errors import StoreError


@dataclass(frozen=True, slots=True)
class StoredEntrant:
    """An entrant as the store holds it: its ``number`` in the tournament, the ``bot`` it entered
    as, and why its remaining pairs are refused (changed during the run), or None."""

    number: int
    bot: EntrantRecord
    withdrawn: str | None


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """The tournament as its row holds it: its id, ``name`` and ``seed``, its settings, when it was
    created and finished (ISO times; None while it runs)."""

    id: int
    name: str
    seed: int
    settings: TournamentSettings
    created_at: str
    finished_at: str | None


@dataclass(frozen=True, slots=True)
class MatchRow:
    """A stored match: its row ``id``, place in the schedule (``pair_index``, ``half``), ``match_id``
    and ``seed``; the entrants on seats 0 and 1; the winner's seat (None: void or no winner), the
    score, whether it ended by forfeit or was void, how many hands were stored, and the record of
    a hand a fault cut short (``interrupted_json``; read it with ``hand_record``)."""

    id: int
    pair_index: int
    half: int
    match_id: str
    seed: int
    seat0: int
    seat1: int
    winner_seat: int | None
    score0: int
    score1: int
    forfeit: bool
    void: bool
    hands: int
    interrupted_json: str | None

    @classmethod
    def of(cls, row: Sequence[Any]) -> MatchRow:
        """The record of a row of the store's match columns, in the order of the fields."""
        (id_, pair_index, half, match_id, seed, seat0, seat1, winner_seat, score0, score1, forfeit, void, hands,
         interrupted_json) = row
        return cls(id_, pair_index, half, match_id, seed, seat0, seat1, winner_seat, score0, score1, bool(forfeit),
                   bool(void), hands, interrupted_json)

    @property
    def seats(self) -> tuple[int, int]:
        """The entrants on seat 0 and seat 1."""
        return self.seat0, self.seat1


@dataclass(frozen=True, slots=True)
class HandRow:
    """A stored hand: its match's row id (``MatchRow.id``), its index, its result's columns and its
    record (``record_json``; read it with ``hand_record``)."""

    match_row: int
    hand_index: int
    winner_seat: int | None
    game_points: int
    reason: str
    total0: int
    total1: int
    tricks0: int
    tricks1: int
    record_json: str

    @property
    def result(self) -> HandResult | None:
        """The stored result, or None when its reason is not one of the engine's (a damaged or
        foreign store); other columns are taken as stored, and ``verify`` checks them against a replay."""
        try:
            return HandResult(self.winner_seat, self.game_points, Reason(self.reason), (self.total0, self.total1),
                              (self.tricks0, self.tricks1))
        except ValueError:
            return None


@dataclass(frozen=True, slots=True)
class SeatingHands:
    """The stored hands of every match with entrant ``seat0`` on seat 0 and ``seat1`` on seat 1:
    how many, and the game points won in them on each seat."""

    seat0: int
    seat1: int
    hands: int
    points0: int
    points1: int


@dataclass(frozen=True, slots=True)
class FaultRow:
    """A stored fault: its row ``id``, its match (row id and ``match_id``), the seat and the entrant
    charged (None: the harness), its kind and detail, and its whole record as stored (``record``:
    ``Fault.to_dict``, the evidence shown as it was kept) with the hand it happened in."""

    id: int
    match_row: int
    match_id: str
    seat: int | None
    entrant: int | None
    kind: str
    detail: str
    record: dict[str, Any]

    @classmethod
    def of(cls, row: Sequence[Any]) -> FaultRow:
        """The record of a row of ``Store.faults``' columns (StoreError if its ``fault_json`` is not an object)."""
        id_, match_row, match_id, seat, entrant, kind, detail, fault_json = row
        try:
            record = json.loads(fault_json)
        except ValueError as exc:
            raise StoreError(f"fault {id_}: its record is not JSON ({exc})") from None
        if not isinstance(record, dict):
            raise StoreError(f"fault {id_}: its record is not an object")
        return cls(id_, match_row, match_id, seat, entrant, kind, detail, record)

    @property
    def hand_index(self) -> int | None:
        """The hand (0-based) the fault happened in, when its record says."""
        index = self.record.get("hand_index")
        return index if type(index) is int else None


@dataclass(frozen=True, slots=True)
class ThinkRow:
    """One seat's decision times in a stored match, in ms: ``wall_ms`` each, and ``cpu_ms`` (None
    entries where not measured; None for a store from before CPU times were kept)."""

    match_row: int
    seat: int
    entrant: int
    wall_ms: tuple[float, ...]
    cpu_ms: tuple[float | None, ...] | None


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    """An entrant's rating (``mu``, ``sigma``) once every pair up to ``after_pair`` was rated."""

    after_pair: int
    entrant: int
    mu: float
    sigma: float


@dataclass(frozen=True, slots=True)
class StoredPair:
    """A scheduled pair as the store holds it: the ``pair``, when its results were stored (None:
    not yet) and how many times it was played to get them."""

    pair: Pair
    finished_at: str | None
    attempts: int


def hand_record(text: str) -> HandRecord:
    """The hand record a ``record_json`` or ``interrupted_json`` column holds; StoreError when malformed."""
    try:
        return HandRecord.from_dict(json.loads(text))
    except ValueError as exc:  # json.JSONDecodeError is one too
        raise StoreError(f"the hand record is malformed: {exc}") from None
