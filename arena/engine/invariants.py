"""The invariants of docs/rules.md R16, checkable on any hand (property tests and the fuzz bench).

``check_step`` holds after every action; ``check_end`` once the hand is over. Both raise
``InvariantError`` naming what broke. Some invariants assume options (noted where checked).
"""

from __future__ import annotations

from .cards import CARD_NAMES, CARD_POINTS
from .hand import Hand
from .result import Reason


class InvariantError(AssertionError):
    """A hand broke one of the invariants of docs/rules.md R16."""


def _require(condition: bool, what: str, hand: Hand) -> None:
    if not condition:
        raise InvariantError(f"{what}: {hand!r} deck={list(hand.deck)} dealer={hand.dealer} "
                             f"actions={hand.record()['actions'] if hand.deck else '?'}")


def check_step(hand: Hand) -> None:
    """Card conservation, totals kept right, at least two choices to move, equal hands and stock size at each lead."""
    v0, v1 = hand.view(0), hand.view(1)
    played = [e["card"] for e in v0["events"] if e["type"] == "play"]
    stock = [CARD_NAMES[c] for c in hand.core.stock]
    dead = [CARD_NAMES[c] for c in hand.core.dead]
    everything = v0["hand"] + v1["hand"] + played + stock + dead
    _require(sorted(everything) == sorted(CARD_NAMES), "card conservation", hand)
    core = hand.core
    _require(core.totals == [core.counted_total(0), core.counted_total(1)],
             "the kept totals are the totals counted from the scores (R9)", hand)
    if hand.is_over:
        _require(hand.to_move is None and hand.legal_actions() == [], "a finished hand offers nothing", hand)
        return
    legal = hand.legal_actions()
    _require(len(legal) >= 2, "to_move has at least two legal actions (R5.1)", hand)
    if v0["lead"] is None and legal[-1].startswith("play"):  # a LEAD decision
        _require(len(v0["hand"]) == len(v1["hand"]), "equal hand sizes at every lead", hand)
        if v0["stock_size"]:
            _require(v0["stock_size"] == 12 - 2 * len(v0["tricks"]), "stock size 12 - 2t while open", hand)


def check_end(hand: Hand) -> None:
    """Game points, trick counts, point sums and marriage timing of a finished hand."""
    rules = hand.rules
    view = hand.view(0)
    result = hand.result
    _require(result is not None, "the hand is over", hand)
    assert result is not None
    _require(0 <= result.game_points <= 3, "game points in 0..3", hand)
    _require((result.game_points == 0) == (result.reason == Reason.TIE) == (result.winner is None),
             "a tie and only a tie scores nothing", hand)
    n_tricks = len(view["tricks"])
    declared = any(e["type"] == "declare" for e in view["events"])
    close = next((e for e in view["events"] if e["type"] == "close"), None)
    if close is None and not declared:
        _require(n_tricks == 12, "12 tricks in a never-closed hand nobody declared", hand)
    if close is not None:
        t = close["trick_number"] - 1  # tricks finished at the close
        pre_draw_close = sum(1 for e in view["events"] if e["type"] == "draw") // 2 < min(t, 6)
        _require(n_tricks <= (t + 5 if pre_draw_close else t + 6), "tricks after a close", hand)
    if not declared:  # played out: every live card was played
        dead_points = sum(CARD_POINTS[c] for c in hand.core.dead)
        _require(sum(view["trick_points"]) == 120 - dead_points, "trick points = 120 - dead cards", hand)
        if close is None:
            valid = sum(m["value"] for m in view["marriages"] if m["valid"])
            _require(sum(view["totals"]) == 120 + rules.last_trick_bonus + valid,
                     "totals = 130 + valid marriages in a never-closed hand", hand)
    suits = [m["suit"] for m in view["marriages"]]
    _require(len(suits) == len(set(suits)), "each suit married at most once", hand)
    if not rules.marriages_in_phase_b:  # default and pagat: tricks 1-6 and the closing lead only
        plays, closed_at = 0, None
        for e in view["events"]:
            if e["type"] == "play":
                plays += 1
            elif e["type"] == "close":
                closed_at = plays
            elif e["type"] == "meld":
                _require(plays // 2 < 6, "no marriage after trick 6", hand)
                _require(closed_at is None or closed_at == plays, "no marriage after the closing lead", hand)
