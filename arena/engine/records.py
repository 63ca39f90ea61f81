"""What the harness hands the results, as typed records: pure data, shared by both.

A ``HandRecord`` is one dealt hand and the actions played in it (``Hand.record()`` typed), a
``Fault`` a bot's misbehaviour as a value (protocol/PROTOCOL.md section 9), a ``Think`` one
answered decision's time, a ``MatchOutcome`` a whole match as the store keeps it, a
``PairOutcome`` the two halves of a duplicate pair as a worker returns them; an
``EntrantRecord`` is a bot as a tournament's store enters it, a ``Pair`` one pair of its
schedule (``arena.schedule`` makes them), ``TournamentSettings`` its settings as stored (with
``SprtSettings``, a stopping rule's numbers). All are frozen and picklable (they cross process
pools and Dask); ``to_dict`` gives the JSON forms that ``arena match --json`` prints and the
store's ``fault_json`` and ``record_json`` keep.
"""

from __future__ import annotations

from collections.abc import Mapping
import functools
import operator
from dataclasses import asdict, dataclass, fields
from enum import StrEnum
from typing import Any, NamedTuple

from .fastpickle import by_fields
from .result import HandResult
from .rules import Rules


@by_fields
@dataclass(frozen=True, slots=True)
class HandRecord:
    """One hand as dealt and played: its rules, the 24 cards in deal order, the dealer, and the
    actions given to ``Hand.apply`` (not those the engine applied itself).

    ``to_dict`` is ``Hand.record()``'s JSON form, key for key and in the same order, which the
    store keeps and ``Hand.replay`` takes; ``from_dict`` reads it back.
    """

    rules: Rules
    deck: tuple[str, ...]
    dealer: int
    actions: tuple[str, ...]

    @classmethod
    def of(cls, record: Mapping[str, Any], rules: Rules) -> HandRecord:
        """The typed form of a record the engine just made (``Hand.record()``) under ``rules``;
        unchecked: the referee's path, once a hand, builds no ``Rules`` again."""
        return cls(rules, tuple(record["deck"]), record["dealer"], tuple(record["actions"]))

    @classmethod
    def from_dict(cls, data: object) -> HandRecord:
        """Read the JSON form back (a stored or printed record); ValueError naming what is malformed."""
        if not isinstance(data, dict):
            raise ValueError(f"a hand record is an object, not {type(data).__name__}")
        options, deck, dealer, actions = (data.get(key) for key in ("rules", "deck", "dealer", "actions"))
        if not isinstance(options, dict):
            raise ValueError("its rules are not an object")
        if not isinstance(deck, list) or not all(isinstance(card, str) for card in deck):
            raise ValueError("its deck is not a list of cards")
        if type(dealer) is not int or dealer not in (0, 1):
            raise ValueError(f"its dealer {dealer!r} is not a seat")
        if not isinstance(actions, list) or not all(isinstance(action, str) for action in actions):
            raise ValueError("its actions are not a list of strings")
        return cls(Rules(**options), tuple(deck), dealer, tuple(actions))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: exactly ``Hand.record()``'s."""
        return {"rules": self.rules.to_dict(), "deck": list(self.deck), "dealer": self.dealer,
                "actions": list(self.actions)}


class FaultKind(StrEnum):
    """The closed vocabulary of faults; values are stored as text and sent on the wire."""

    CRASH = "crash"
    TIMEOUT = "timeout"
    MALFORMED = "malformed"
    ILLEGAL = "illegal"
    DISCONNECT = "disconnect"
    PROTOCOL = "protocol"
    HARNESS = "harness"


@by_fields
@dataclass(frozen=True, slots=True)
class Fault:
    """One fault, with the evidence: request, raw reply, timings and the bot's stderr tail."""

    kind: FaultKind
    seat: int | None
    bot: str
    detail: str
    match_id: str = ""
    hand_index: int | None = None
    request: str | None = None
    reply: str | None = None
    elapsed_ms: float | None = None
    time_limit_ms: int | None = None
    bank_ms: int | None = None
    dropped_replies: int = 0
    exit: str | None = None
    stderr_tail: str | None = None

    @property
    def charged(self) -> bool:
        """Whether a bot is charged for it (harness faults never are)."""
        return self.kind is not FaultKind.HARNESS

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what the results store keeps)."""
        data = asdict(self)
        data["kind"] = str(self.kind)
        return data

    def describe(self) -> str:
        """One line for people."""
        who = f"seat {self.seat} ({self.bot})" if self.seat is not None else self.bot
        return f"{self.kind} by {who}: {self.detail}"


class Think(NamedTuple):
    """One answered decision's time: the seat, its hand, wall and CPU time (None: not measured), in ms.

    A named tuple, not a dataclass like the other records: a referee makes one per decision and
    a worker pickles every one to the runner, and a tuple is built and pickled in C (a frozen
    dataclass's ``__init__`` and ``__reduce__`` run in Python).
    """

    seat: int
    hand_index: int
    wall_ms: float
    cpu_ms: float | None = None

    def to_list(self) -> list[Any]:
        """JSON-ready form: ``[seat, hand_index, wall_ms, cpu_ms]``."""
        return list(self)


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """Everything the results store keeps about a refereed match.

    ``winner`` is a seat, or None for a void match; ``results`` and ``records`` are the
    finished hands in order, ``interrupted`` the record of a hand cut short by a forfeit or a
    void, ``think_ms`` every answered decision's time.
    """

    match_id: str
    seed: int | str
    names: tuple[str, str]
    rules: Rules
    winner: int | None
    score: tuple[int, int]
    forfeit: bool
    void: bool
    faults: tuple[Fault, ...] = ()
    results: tuple[HandResult, ...] = ()
    records: tuple[HandRecord, ...] = ()
    think_ms: tuple[Think, ...] = ()
    interrupted: HandRecord | None = None

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # by_fields, with the decisions' times as plain tuples: one Think per decision would
        # each call its named tuple's __getnewargs__ (in Python) when pickled
        values = list(_OUTCOME_FIELDS(self))
        values[_THINKS] = tuple(map(tuple, self.think_ms))
        return _match_outcome, tuple(values)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "match_id": self.match_id,
            "seed": self.seed,
            "names": list(self.names),
            "rules": self.rules.to_dict(),
            "winner": self.winner,
            "score": list(self.score),
            "forfeit": self.forfeit,
            "void": self.void,
            "faults": [f.to_dict() for f in self.faults],
            "results": [r.to_dict() for r in self.results],
            "records": [r.to_dict() for r in self.records],
            "think_ms": [t.to_list() for t in self.think_ms],
            "interrupted": None if self.interrupted is None else self.interrupted.to_dict(),
        }


_OUTCOME_NAMES = [field.name for field in fields(MatchOutcome)]
_OUTCOME_FIELDS = operator.attrgetter(*_OUTCOME_NAMES)
_THINKS = _OUTCOME_NAMES.index("think_ms")
_new_think = functools.partial(tuple.__new__, Think)  # a Think from a plain tuple, in C


def _match_outcome(*values: Any) -> MatchOutcome:
    """A ``MatchOutcome`` from its pickled field values (``MatchOutcome.__reduce__``)."""
    rebuilt = list(values)
    rebuilt[_THINKS] = tuple(map(_new_think, values[_THINKS]))
    return MatchOutcome(*rebuilt)


@dataclass(frozen=True, slots=True)
class EntrantRecord:
    """A bot as a tournament enters it: which bot (``name``, ``version``, the ``fingerprint`` of its
    folder, the folder's ``path``) under which ``label`` (unique within the tournament)."""

    name: str
    version: str
    fingerprint: str
    path: str
    label: str


@dataclass(frozen=True, slots=True)
class SprtSettings:
    """The SPRT an ``arena sprt`` run stops on: H0 nElo ``elo0`` against H1 nElo ``elo1`` at error
    rates ``alpha`` (false H1) and ``beta`` (false H0). Plain numbers: ``results.sprt.SprtTracker``
    builds the test from them, and refuses a pair of hypotheses that make none."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05


@dataclass(frozen=True, slots=True)
class TournamentSettings:
    """A tournament's settings as its store keeps them: ``document``, the harness's whole JSON form
    (``arena.tournament.TournamentConfig.to_dict``, which a resume reads back), and what the
    results read of it, typed: the ``rules`` of every match, ``pairs_per_pairing`` (an SPRT's most
    pairs) and the stopping rule ``sprt``. Build it with ``from_dict``, so the two always agree.
    """

    document: Mapping[str, Any]
    rules: Rules
    pairs_per_pairing: int
    sprt: SprtSettings | None

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> TournamentSettings:
        """The settings of ``document``; a key it lacks (a store from before it, the server's ladder)
        takes its default. ValueError when what the results read is malformed."""
        try:
            sprt = document.get("sprt")
            return cls(document=dict(document), rules=Rules(**document.get("rules", {})),
                       pairs_per_pairing=int(document.get("pairs_per_pairing", 1)),
                       sprt=SprtSettings(**sprt) if sprt else None)
        except TypeError as exc:
            raise ValueError(f"malformed tournament settings ({exc})") from None


@dataclass(frozen=True, slots=True)
class Pair:
    """Pair number ``index``: entrants ``a`` and ``b`` (indices) play ``seed`` twice, seats swapped."""

    index: int
    a: int
    b: int
    seed: int

    def seats(self, half: int) -> tuple[int, int]:
        """The entrants in seat 0 and seat 1 in ``half`` (0 or 1)."""
        return (self.a, self.b) if half == 0 else (self.b, self.a)

    def match_id(self, half: int) -> str:
        """The match's id on the wire and in the store."""
        return match_id(self.index, half)


def match_id(pair_index: int, half: int) -> str:
    """The id of half ``half`` of pair ``pair_index``: ``p00003h1`` (pair 3, second half)."""
    return f"p{pair_index:05d}h{half}"


@dataclass(frozen=True, slots=True)
class ChangedBot:
    """A pair's bot whose folder no longer matches its fingerprint: ``slot`` 0 or 1 of the pair."""

    slot: int
    fingerprint: str  # the folder's fingerprint now ("missing" when it cannot be read)


@by_fields
@dataclass(frozen=True, slots=True)
class PairOutcome:
    """A duplicate pair as a worker returns it: its two halves in order, or, when a bot changed
    before or while it played, no outcomes and the ``changed`` bots (the pair is refused)."""

    pair_index: int
    outcomes: tuple[MatchOutcome, ...] = ()
    changed: tuple[ChangedBot, ...] = ()

    def __post_init__(self) -> None:
        expected = 0 if self.changed else 2
        if len(self.outcomes) != expected:
            raise ValueError(f"pair {self.pair_index}: {len(self.outcomes)} outcomes, expected {expected}")
