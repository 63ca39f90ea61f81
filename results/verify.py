"""Replay every stored match through the engine and report anything it does not reproduce.

Each match is replayed through ``Match(rules, seed)`` with its recorded actions: every hand's
deck and dealer must be the ones the seed and the match flow give, every action legal, every
stored hand result, the score and the winner the engine's own. The seeds themselves are
re-derived from the deal source: the public tournament seed, or, given the revealed key, the
secret key (checked first against the published commitment). The rows around the hands must
agree too: each match's entrants are its pair's for its half, a void match carries a harness
fault, a forfeit goes to the seat opposite one that was charged, and a finished pair has both
halves stored (an unfinished one none).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from arena.engine import HandResult, IllegalAction, Match, Rules
from arena.engine.deals import DealMode, Deals, commitment
from arena.engine.records import HandRecord

from .errors import StoreError
from .rows import FaultRow, HandRow, MatchRow, hand_record
from .store import Store


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A stored pair, match or hand that the engine or the deal source does not reproduce."""

    match_id: str
    hand_index: int | None
    problem: str

    def describe(self) -> str:
        """One line for people: where, then what."""
        where = self.match_id + (f" hand {self.hand_index + 1}" if self.hand_index is not None else "")
        return f"{where}: {self.problem}"


@dataclass(slots=True)
class Verification:
    """What ``verify`` checked and what it found."""

    hands: int = 0
    matches: int = 0
    deals: str = ""
    problems: list[Mismatch] = field(default_factory=list)


def verify(store: Store, key: bytes | None = None, published: str | None = None) -> Verification:
    """Check the whole tournament; ``key`` is the revealed deal key, ``published`` the commitment
    read from an export (``leaderboard.json``), both optional."""
    tournament = store.tournament()
    tid, rules = tournament.id, tournament.settings.rules
    report = Verification()
    source = _deal_source(store.deals(tid), key, published, report)
    pairs = {stored.pair.index: stored for stored in store.pairs(tid)}
    for stored in pairs.values():
        pair = stored.pair
        if source is not None and pair.seed != source.pair_seed(pair.index):
            report.problems.append(Mismatch(f"pair {pair.index}", None,
                                            "the stored seed is not the one the deal source derives"))
    faults: dict[int, list[FaultRow]] = {}
    for fault in store.faults(tid):
        faults.setdefault(fault.match_row, []).append(fault)
    halves: dict[int, list[int]] = {}
    for match in store.matches(tid):
        report.matches += 1
        halves.setdefault(match.pair_index, []).append(match.half)
        stored_pair = pairs.get(match.pair_index)
        seed = stored_pair.pair.seed if stored_pair is not None else None
        if match.seed != seed:
            report.problems.append(Mismatch(match.match_id, None, "the match seed is not its pair's seed"))
        if stored_pair is not None and match.seats != stored_pair.pair.seats(match.half):
            report.problems.append(Mismatch(match.match_id, None, f"entrants {match.seats} on the seats, the "
                                                                  f"pair's half gives {stored_pair.pair.seats(match.half)}"))
        report.problems.extend(_verdict(match, faults.get(match.id, [])))
        if source is not None:
            seed = source.pair_seed(match.pair_index)
        replay = _Replay(match, rules, match.seed if seed is None else seed)
        report.hands += replay.run(store.hands(match.id))
        report.problems.extend(replay.problems)
    for index, stored_pair in pairs.items():
        stored_halves = sorted(halves.get(index, []))
        if stored_halves != ([0, 1] if stored_pair.finished_at is not None else []):
            state = "finished" if stored_pair.finished_at is not None else "not finished"
            report.problems.append(Mismatch(f"pair {index}", None, f"{state}, with halves {stored_halves} stored"))
    return report


def _verdict(match: MatchRow, faults: list[FaultRow]) -> list[Mismatch]:
    """What the match's faults contradict in its verdict: a void without a harness fault, or a
    forfeit won by the only seat that was charged."""
    if match.void and not any(fault.kind == "harness" for fault in faults):
        return [Mismatch(match.match_id, None, "void, without a harness fault")]
    charged = {fault.seat for fault in faults if fault.seat is not None and fault.kind != "harness"}
    if match.forfeit and not match.void and match.winner_seat is not None and 1 - match.winner_seat not in charged:
        return [Mismatch(match.match_id, None, f"a forfeit won by seat {match.winner_seat}, but seat "
                                               f"{1 - match.winner_seat} was charged no fault")]
    return []


def _deal_source(deals: Deals, key: bytes | None, published: str | None, report: Verification) -> Deals | None:
    """The source to re-derive seeds from (None: secret deals without the key); notes what was checked."""
    if published is not None and published != deals.commitment:
        report.problems.append(Mismatch("tournament", None, f"the published deal commitment {published} is not "
                                                            f"the one of the stored key ({deals.commitment})"))
    if key is None:
        if deals.mode is DealMode.PUBLIC:
            report.deals = f"public deals: every seed re-derived from the tournament seed {deals.seed}"
            return deals
        report.deals = ("secret deals: decks checked against the stored seeds only; pass --key (see "
                        "'arena reveal') to re-derive every deck from the key")
        return None
    if deals.mode is DealMode.PUBLIC:
        report.problems.append(Mismatch("tournament", None, "its deals are public: there is no key to check"))
        report.deals = "public deals: the key was not used"
        return None
    if commitment(key) != deals.commitment:
        report.problems.append(Mismatch("tournament", None, f"wrong key: its sha256 {commitment(key)} is not the "
                                                            f"deal commitment {deals.commitment}"))
        report.deals = "secret deals: the key does not match the commitment, so no deck was derived from it"
        return None
    report.deals = f"secret deals: the key matches the commitment {deals.commitment}; every seed re-derived from it"
    return Deals.secret(key)


class _Replay:
    """One stored match driven through an engine ``Match`` on its seed."""

    def __init__(self, match: MatchRow, rules: Rules, seed: int) -> None:
        self.row = match
        self.rules = rules
        self.engine = Match(rules, seed=seed)
        self.problems: list[Mismatch] = []

    def _fail(self, hand_index: int | None, problem: str) -> None:
        self.problems.append(Mismatch(self.row.match_id, hand_index, problem))

    def run(self, hands: list[HandRow]) -> int:
        """Replay the stored hands, then check the score and winner; returns the hands replayed."""
        replayed = 0
        for row in hands:
            if not self._hand(row.hand_index, row.record_json, row.result):
                break
            replayed += 1
        else:
            index, interrupted = self.engine.hand_index, self.row.interrupted_json
            record = self._record(index, interrupted) if interrupted else None
            if record is not None and self._deal_matches(index, record):
                self._actions(index, record.actions, finishes=False)
            self._outcome(len(hands))
        return replayed

    def _record(self, index: int, text: str) -> HandRecord | None:
        """The stored hand record, or None (noted) when it is malformed."""
        try:
            return hand_record(text)
        except StoreError as exc:
            self._fail(index, str(exc))
            return None

    def _hand(self, index: int, text: str, stored: HandResult | None) -> bool:
        """Replay one finished hand; False if the match cannot be followed beyond it."""
        engine = self.engine
        if engine.is_over:
            self._fail(index, "a hand stored after the match was over")
            return False
        if index != engine.hand_index:
            self._fail(index, f"stored as hand {index + 1}, the engine is at hand {engine.hand_index + 1}")
            return False
        record = self._record(index, text)
        if record is None or not self._deal_matches(index, record):
            return False
        result = self._actions(index, record.actions, finishes=True)
        if result is None:
            return False
        if result != stored:
            self._fail(index, f"stored {stored}, the engine gives {result}")
        return True

    def _deal_matches(self, index: int, record: HandRecord) -> bool:
        hand = self.engine.hand
        if record.rules != self.rules:
            self._fail(index, f"recorded under rules {record.rules.to_dict()}, the tournament's are "
                              f"{self.rules.to_dict()}")
        elif record.deck != hand.deck:
            self._fail(index, "the deck is not the one the match seed derives")
        elif record.dealer != hand.dealer:
            self._fail(index, f"dealer {record.dealer} stored, the match flow gives {hand.dealer}")
        else:
            return True
        return False

    def _actions(self, index: int, actions: Sequence[str], *, finishes: bool) -> HandResult | None:
        """Apply a hand's recorded actions; the result if they finish it as ``finishes`` says."""
        result = None
        for i, action in enumerate(actions):
            if result is not None:
                self._fail(index, f"action {i} comes after the hand was over")
                return None
            try:
                result = self.engine.apply(action)
            except IllegalAction as exc:
                self._fail(index, f"the record does not replay at action {i}: {exc}")
                return None
        if finishes and result is None:
            self._fail(index, "the record stops before the hand is over")
        elif not finishes and result is not None:
            self._fail(index, "the interrupted hand is in fact over")
        return result

    def _outcome(self, stored_hands: int) -> None:
        row, engine = self.row, self.engine
        score = (row.score0, row.score1)
        if score != engine.score:
            self._fail(None, f"stored score {score[0]}-{score[1]}, the hands add up to "
                             f"{engine.score[0]}-{engine.score[1]}")
        if row.hands != stored_hands:
            self._fail(None, f"says {row.hands} hands, {stored_hands} are stored")
        winner = row.winner_seat
        if row.void:
            if winner is not None:
                self._fail(None, "a void match has a winner")
        elif row.forfeit:
            if winner is None or engine.is_over:
                self._fail(None, "a forfeit needs a winner and a match that was not over")
        elif not engine.is_over:
            self._fail(None, "the match stops before a seat reached the target, without a forfeit")
        elif winner != engine.winner:
            self._fail(None, f"stored winner seat {winner}, the engine gives seat {engine.winner}")
