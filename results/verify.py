"""Re-simulate every stored hand through the engine and report any mismatch."""

from __future__ import annotations

import json
from dataclasses import dataclass

from arena.engine import Hand, HandResult, IllegalAction, Rules, first_dealer, match_deck

from .store import Store


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A stored hand or match that the engine does not reproduce."""

    match_id: str
    hand_index: int | None
    problem: str


def verify(store: Store) -> tuple[int, list[Mismatch]]:
    """(hands checked, mismatches) over the whole tournament."""
    tid = store.tournament()["id"]
    problems: list[Mismatch] = []
    checked = 0
    for match in store.matches(tid):
        score = [0, 0]
        carry = 0
        rules = None
        for row in store.hands(match["id"]):
            checked += 1
            record = json.loads(row["record_json"])
            where = (match["match_id"], row["hand_index"])
            if record["deck"] != match_deck(match["seed"], row["hand_index"]):
                problems.append(Mismatch(*where, "the deck is not the one the match seed derives"))
            try:
                hand = Hand.replay(record)
            except IllegalAction as exc:
                problems.append(Mismatch(*where, f"the record does not replay: {exc}"))
                continue
            rules = hand.rules
            if row["hand_index"] == 0 and record["dealer"] != first_dealer(match["seed"], rules):
                problems.append(Mismatch(*where, "the first dealer is not the one the match seed derives"))
            stored = HandResult.from_dict({
                "winner": row["winner_seat"], "game_points": row["game_points"], "reason": row["reason"],
                "totals": [row["total0"], row["total1"]], "tricks": [row["tricks0"], row["tricks1"]],
            })
            if hand.result != stored:
                problems.append(Mismatch(*where, f"stored {stored}, the engine gives {hand.result}"))
                continue
            assert hand.result is not None
            if hand.result.winner is None:
                carry = _next_carry(rules, carry)
            else:
                score[hand.result.winner] += hand.result.game_points + carry
                carry = 0
        if [match["score0"], match["score1"]] != score:
            problems.append(Mismatch(match["match_id"], None,
                                     f"stored score {match['score0']}-{match['score1']}, hands add up to "
                                     f"{score[0]}-{score[1]}"))
        target = (rules or Rules()).match_target
        if not match["forfeit"] and not match["void"] and match["winner_seat"] is not None:
            if score[match["winner_seat"]] < target:
                problems.append(Mismatch(match["match_id"], None, "the stored winner never reached the target"))
    return checked, problems


def _next_carry(rules: Rules, carry: int) -> int:
    if rules.tie_rule == "carry_accumulate":
        return carry + 1
    return 1 if rules.tie_rule == "carry_max1" else 0
