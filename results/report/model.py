"""What the report shows, computed from the store: one read, many pages.

The numbers of the leaderboard and crosstable come from ``build_leaderboard`` (the one
source of truth the terminal table and the exports use). What the store does not hold
directly (behaviour counts, running totals, every intermediate position of a hand) is
derived here by replaying the stored hand records through the engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from collections.abc import Callable, Collection, Sequence
from typing import Any

from arena.engine import Hand, Match, Rules
from arena.engine.cards import CARD_INDEX, CARD_POINTS
from arena.engine.records import HandRecord
from arena.engine.view import organiser_events

from ..leaderboard import Leaderboard, build_leaderboard
from ..pairgames import stored_result
from ..ratings import RatingEnv
from ..rows import FaultRow, HandRow, MatchRow, StoredEntrant, TournamentRow, hand_record
from ..store import Store

SUIT_SYMBOLS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
REASON_TEXT = {
    "declared": "declared 66",
    "false_declaration": "false declaration",
    "close_failed": "failed close",
    "closer_opponent_out": "opponent of the closer went out",
    "played_out": "played out",
    "tie": "tie",
}


def pretty(card: str) -> str:
    """``"TH"`` -> ``"10♥"``."""
    return ("10" if card[0] == "T" else card[0]) + SUIT_SYMBOLS[card[1]]


# ---------------------------------------------------------------------------- behaviour


@dataclass(slots=True)
class Behaviour:
    """How one entrant played its stored hands (derived by replaying them)."""

    hands: int = 0
    hands_won: int = 0
    closes: int = 0
    closes_won: int = 0
    marriages: int = 0
    trump_marriages: int = 0
    exchanges: int = 0
    declarations: int = 0
    false_declarations: int = 0
    wins_by_points: dict[int, int] = field(default_factory=lambda: {1: 0, 2: 0, 3: 0})

    @property
    def close_success_pct(self) -> float | None:
        """Share of this entrant's closes after which it won the hand."""
        return 100.0 * self.closes_won / self.closes if self.closes else None


def add_hand_behaviour(record: HandRecord, entrants: tuple[int, int], into: dict[int, Behaviour]) -> None:
    """Replay one finished hand and add what each seat did to ``into`` (keyed by entrant)."""
    hand = Hand.replay(record.to_dict())
    result = hand.result
    if result is None:
        return
    for seat in (0, 1):
        into[entrants[seat]].hands += 1
    if result.winner is not None:
        won = into[entrants[result.winner]]
        won.hands_won += 1
        won.wins_by_points[result.game_points] = won.wins_by_points.get(result.game_points, 0) + 1
    for event in organiser_events(hand):
        seat, kind = event["seat"], event["type"]
        if seat is None or kind in ("play", "draw", "pass", "end"):
            continue
        mine = into[entrants[seat]]
        if kind == "close":
            mine.closes += 1
            mine.closes_won += result.winner == seat
        elif kind == "meld":
            mine.marriages += 1
            mine.trump_marriages += event["value"] == 40
        elif kind == "exchange":
            mine.exchanges += 1
        elif kind == "declare":
            mine.declarations += 1
            mine.false_declarations += result.winner != seat


# ---------------------------------------------------------------------------- hand replays


def _event_text(event: dict[str, Any], names: tuple[str, str], trick: dict[str, Any] | None) -> str:
    seat = event["seat"]
    who = names[seat] if seat is not None else "nobody"
    kind = event["type"]
    if kind == "play":
        text = f"{who} plays {pretty(event['card'])}"
        if trick is not None:
            value = CARD_POINTS[CARD_INDEX[trick["lead"]]] + CARD_POINTS[CARD_INDEX[trick["follow"]]]
            text += f"; {names[trick['winner']]} takes the trick ({value})"
        return text
    if kind == "draw":
        return f"{who} draws {pretty(event['card'])}" if event["card"] else f"{who} draws"
    if kind == "meld":
        return f"{who} announces the {SUIT_SYMBOLS[event['suit']]} marriage ({event['value']})"
    if kind == "exchange":
        return f"{who} exchanges {pretty(event['gave'])} for the up-card {pretty(event['took'])}"
    if kind == "close":
        return f"{who} closes the stock"
    if kind == "declare":
        return f"{who} declares with {event['total']}"
    if kind == "pass":
        return f"{who} does not declare"
    if seat is None:
        return "the hand is a tie"
    points, reason = event["game_points"], REASON_TEXT.get(event["reason"], event["reason"])
    return f"{who} wins {points} game point{'s' if points != 1 else ''} ({reason})"


def _snapshot(v0: dict[str, Any], v1: dict[str, Any], deck: list[str], dead: list[str],
              table: dict[str, Any] | None) -> dict[str, Any]:
    size = v0["stock_size"]
    return {
        "trick": v0["trick_number"],
        "hands": [v0["hand"], v1["hand"]],
        "up": v0["up_card"],
        # Face-down stock in draw order: the stock is c13.. c23 with c12 (the up-card) drawn last.
        "stock": deck[25 - size:] if size else [],
        "closed": v0["closed"],
        "closer": v0["closer"],
        "dead": dead,
        "table": table,
        "totals": v0["totals"],
        "trick_points": v0["trick_points"],
        "tricks_won": v0["tricks_won"],
        "marriages": v0["marriages"],
        "to_move": v0["to_move"],
        "result": v0["result"],
    }


def hand_steps(hand: Hand, actions: Sequence[str], names: tuple[str, str],
               apply: Callable[[str], object] | None = None) -> list[dict[str, Any]]:
    """Every position of ``hand`` (freshly dealt) as ``actions`` are applied: one step per action.

    ``apply(action)``, if given, is called instead of ``hand.apply`` (to drive a ``Match``).
    A step holds the position after the action, the log lines of everything that happened
    (forced draws and automatic declarations included), and the trick on the table.
    """
    deck = list(hand.deck)
    v0, v1 = hand.view(0), hand.view(1)
    steps = [{"action": None, "seat": None, "log": [], **_snapshot(v0, v1, deck, [], None)}]
    seen, plays = len(v0["events"]), 0
    dead: list[str] = []
    for action in actions:
        seat = hand.to_move
        previous = steps[-1]
        (apply or hand.apply)(action)
        view, v1 = hand.view(0), hand.view(1)
        events = organiser_events(hand)
        table = None
        log = []
        for event in events[seen:]:
            trick = None
            if event["type"] == "play":
                plays += 1
                if plays % 2 == 0:  # every second card played completes a trick
                    trick = view["tricks"][plays // 2 - 1]
                    table = {**trick, "done": True}
            log.append(_event_text(event, names, trick))
        seen = len(events)
        if view["lead"] is not None:  # a card led and not yet answered: that is what lies on the table now
            table = {"leader": 1 - view["to_move"], "lead": view["lead"], "follow": None, "winner": None,
                     "done": False}
        if view["closed"] and not previous["closed"]:
            dead = previous["stock"] + ([previous["up"]] if previous["up"] else [])
        steps.append({"action": action, "seat": seat, "log": log, **_snapshot(view, v1, deck, dead, table)})
    return steps


def match_replay(match: MatchRow, hand_rows: list[HandRow], names: tuple[str, str],
                 fault_hands: Collection[int] = ()) -> list[dict[str, Any]]:
    """Every stored hand of a match, plus the hand a fault interrupted, as replay data.

    The hands are driven through an engine ``Match`` on the match seed, so the running match
    score (with tie carries) is the engine's own. If the records do not follow from the seed
    (a foreign store), each hand is replayed on its own and the match score is left out. A
    fault at the very first decision of a hand leaves no record; if ``fault_hands`` names that
    hand, it is shown as the engine deals it, with no actions.
    """
    records = [hand_record(row.record_json) for row in hand_rows]
    engine_match: Match | None = Match(records[0].rules if records else Rules(), seed=match.seed)
    hands: list[dict[str, Any]] = []

    def replay(record: HandRecord) -> None:
        nonlocal engine_match
        if engine_match is not None and (engine_match.hand.deck != record.deck
                                         or engine_match.hand.dealer != record.dealer):
            engine_match = None
        score_before = list(engine_match.score) if engine_match is not None else None
        if engine_match is not None:
            hand = engine_match.hand
            steps = hand_steps(hand, record.actions, names, apply=engine_match.apply)
        else:
            hand = Hand.deal(record.deck, record.dealer, record.rules)
            steps = hand_steps(hand, record.actions, names)
        finished = steps[-1]["result"] is not None
        hands.append({
            "index": len(hands),
            "dealer": record.dealer,
            "trump": hand.view(0)["trump"],
            "interrupted": not finished,
            "result": steps[-1]["result"],
            "reason_text": REASON_TEXT.get(steps[-1]["result"]["reason"]) if finished else None,
            "score_before": score_before,
            "score_after": list(engine_match.score) if engine_match is not None and finished else None,
            "steps": steps,
        })

    for record in records:
        replay(record)
    if match.interrupted_json:
        replay(hand_record(match.interrupted_json))
    elif len(records) in fault_hands and engine_match is not None and not engine_match.is_over:
        dealt = engine_match.hand
        replay(HandRecord(dealt.rules, dealt.deck, dealt.dealer, ()))
    return hands


# ---------------------------------------------------------------------------- the whole report


@dataclass(slots=True)
class OpponentLine:
    """One entrant's results against one opponent."""

    opponent: int
    label: str
    matches: int = 0
    wins: int = 0
    losses: int = 0
    void: int = 0
    hands: int = 0
    points_for: int = 0
    points_against: int = 0

    @property
    def score_pct(self) -> float | None:
        """Wins per decided match, in percent."""
        decided = self.wins + self.losses
        return 100.0 * self.wins / decided if decided else None


@dataclass(slots=True)
class ReportData:
    """Everything the pages show, read from the store in one go."""

    tournament: TournamentRow
    board: Leaderboard
    entrants: list[StoredEntrant]
    matches: list[dict[str, Any]]
    hands: dict[int, list[HandRow]]
    faults: list[FaultRow]
    snapshots: list[tuple[int, dict[int, tuple[float, float]]]]
    initial: tuple[float, float]
    behaviour: dict[int, Behaviour]
    opponents: dict[int, dict[int, OpponentLine]]
    decisions: dict[int, int]
    version: str

    @property
    def labels(self) -> list[str]:
        """Entrant labels by entrant number."""
        return [e.bot.label for e in self.entrants]

    def match(self, match_id: str) -> dict[str, Any] | None:
        """One match by id."""
        for match in self.matches:
            if match["match_id"] == match_id:
                return match
        return None

    def replay(self, match: dict[str, Any]) -> list[dict[str, Any]]:
        """The replay data of one match's hands."""
        fault_hands = {f.hand_index for f in match["faults"] if f.hand_index is not None}
        return match_replay(match["row"], self.hands.get(match["id"], []), match["names"], fault_hands)


def store_version(store: Store) -> str:
    """A cheap key that changes whenever a pair is stored or the tournament finishes."""
    row = store.db.execute(
        "SELECT t.id, t.created_at, t.finished_at, "
        "(SELECT count(*) FROM pairs p WHERE p.tournament_id = t.id AND p.finished_at IS NOT NULL) "
        "FROM tournaments t ORDER BY t.id LIMIT 1"
    ).fetchone()
    return "none" if row is None else "/".join(str(x) for x in tuple(row))


def load_report_data(store: Store, env: RatingEnv | None = None) -> ReportData:
    """Read the store and compute every number the report shows, from one consistent snapshot.

    The reads share one read transaction, so a pair stored meanwhile by a running tournament
    shows up in all of the pages or in none of them.
    """
    with store.read_transaction():
        return _load(store, env or RatingEnv())


def _load(store: Store, env: RatingEnv) -> ReportData:
    version = store_version(store)
    board = build_leaderboard(store, env)
    tournament = store.tournament()
    tid = tournament.id
    entrants = store.entrants(tid)
    labels = [e.bot.label for e in entrants]
    faults = store.faults(tid)
    faults_by_match: dict[int, list[FaultRow]] = {}
    for fault in faults:
        faults_by_match.setdefault(fault.match_row, []).append(fault)
    hands: dict[int, list[HandRow]] = {}
    for hand in store.all_hands(tid):
        hands.setdefault(hand.match_row, []).append(hand)
    behaviour = {e: Behaviour() for e in range(len(entrants))}
    opponents: dict[int, dict[int, OpponentLine]] = {e: {} for e in range(len(entrants))}
    matches = []
    for match in store.matches(tid):
        seats = match.seats
        names = (labels[seats[0]], labels[seats[1]])
        match_hands = hands.get(match.id, [])
        points = [0, 0]
        for hand in match_hands:
            if hand.winner_seat is not None:
                points[hand.winner_seat] += hand.game_points
            add_hand_behaviour(hand_record(hand.record_json), seats, behaviour)
        for seat in (0, 1):
            me, other = seats[seat], seats[1 - seat]
            line = opponents[me].setdefault(other, OpponentLine(other, labels[other]))
            line.matches += 1
            line.hands += len(match_hands)
            line.points_for += points[seat]
            line.points_against += points[1 - seat]
            result = stored_result(match)
            if result is None:
                line.void += 1
            elif result[0] == me:
                line.wins += 1
            else:
                line.losses += 1
        matches.append({
            "id": match.id,
            "row": match,
            "match_id": match.match_id,
            "pair_index": match.pair_index,
            "half": match.half,
            "seats": seats,
            "names": names,
            "winner_seat": match.winner_seat,
            "winner": None if match.winner_seat is None else seats[match.winner_seat],
            "score": (match.score0, match.score1),
            "forfeit": match.forfeit,
            "void": match.void,
            "hands": match.hands,
            "interrupted": match.interrupted_json is not None,
            "faults": faults_by_match.get(match.id, []),
        })
    by_pair: dict[int, dict[int, tuple[float, float]]] = {}
    for snap in store.snapshots(tid):
        by_pair.setdefault(snap.after_pair, {})[snap.entrant] = (snap.mu, snap.sigma)
    decisions: dict[int, int] = {}
    for row in store.think_times(tid):
        decisions[row.entrant] = decisions.get(row.entrant, 0) + len(row.wall_ms)
    initial = env.initial()
    return ReportData(
        tournament=tournament,
        board=board,
        entrants=entrants,
        matches=matches,
        hands=hands,
        faults=faults,
        snapshots=sorted(by_pair.items()),
        initial=(initial.mu, initial.sigma),
        behaviour=behaviour,
        opponents={e: dict(sorted(lines.items())) for e, lines in opponents.items()},
        decisions=decisions,
        version=version,
    )
