"""The hand-written policies: ``greedy`` (one-ply rules) and ``expert`` (card counting).

Both map a ``Situation`` and the legal int actions (``arena.engine.core``) to one action, so the
same code answers a real request (situation from the view) and plays rollouts inside search
(situation from a searched world). Both declare as soon as they have 66 (the opponent's total can
only grow, so waiting never scores more), never under 66, and always exchange the trump nine.

``greedy``: melds (40 first), never closes, leads its cheapest side card, heads a lead in suit
with its lowest higher card, trumps only a side ace or ten, otherwise discards its cheapest
card, keeping trumps and marriage partners.

``expert`` adds card counting (``Situation.opp_possible``: shown cards, the up-card, voids and
failures to head in Phase B) and:
- closes (before or after the draw) only when sure winners reach 66: top trumps, then, once
  they must have drawn the opponent's trumps, top side cards, plus a marriage whose king is a
  sure winner on the closing lead; melds and goes out when the marriage reaches 66;
- in Phase A scores every follow: the trick's points won or given, what the card is worth
  keeping (trumps, marriage partners, aces), the value of the lead (a marriage to meld), the
  up-card the loser takes before the last draw, and reaching 66 (or letting the opponent);
- leads a sure winner that reaches 66, else its cheapest lead by a cost table;
- in Phase B cashes sure winners (top trumps first while the opponent may hold trumps), heads
  with its lowest winning card, else plays its cheapest card.
"""

from __future__ import annotations

from arena.engine.core import CLOSE, DECLARE, DRAW, EXCHANGE, FINAL, FOLLOW, MELD, PASS, PRE_DRAW
from arena.engine.scoring import marriage_value
from arena.engine.tricks import WINNING_FOLLOWS

from .cards import ACE, CARD_POINTS, CARD_SUIT, KING, NINE, QUEEN, SUIT_MASK, TEN, cards_of
from .knowledge import Situation, meld_suits

WIN_66 = 100  # the score of reaching 66 (or of letting the opponent reach it)
WEIGHTS: dict[str, float] = {
    # The expert's weights, in card points, tuned on duplicate deals against greedy and
    # against variants of itself (scale the table of trump values, etc.).
    "close_slack": 0.0,   # close when the sure points reach 66 minus this
    "trump_keep": 4.0,    # scale of the value of holding a trump beyond its points
    "partner": 1.0,       # scale of the value of holding a marriage partner (Phase A)
    "ace_keep": 2.0,      # value of holding an ace, or a ten whose ace is gone
    "lead_value": 2.0,    # value of winning the lead in Phase A (more with a marriage to meld)
    "up": 1.0,            # weight of taking the up-card by losing the trick before the last draw
    "lead_trump": 10.0,   # cost of leading a trump in Phase A (plus its points)
    "lead_ace": 9.0,      # cost of leading a side ace (or a ten whose ace is gone) in Phase A
    "lead_ten": 12.0,     # cost of leading a side ten while its ace is out
}


def beats(lead: int, c: int, trump: int) -> bool:
    """Whether the follower's card ``c`` wins the trick against ``lead`` (R6.4)."""
    return WINNING_FOLLOWS[trump][lead] >> c & 1 == 1


_KINGS = sum(1 << (s * 6 + KING) for s in range(4))


def partners(mine: int) -> int:
    """The kings and queens of the marriages held in ``mine``."""
    kings = mine & (mine >> 1) & _KINGS  # a king whose queen (the next index) is held too
    return kings | (kings << 1)


def best_meld(sit: Situation, suits: list[int]) -> int:
    """The most valuable of the meldable suits: trumps (40) first."""
    return sit.trump if sit.trump in suits else suits[0]


def _common(sit: Situation, legal: list[int]) -> int | None:
    """The choices greedy and expert make alike: declare at 66, pass, exchange the nine."""
    if DECLARE in legal and sit.total(sit.seat) >= 66:
        return DECLARE
    if sit.phase == FINAL:
        return PASS
    if EXCHANGE in legal:
        return EXCHANGE
    return None


# ----------------------------------------------------------------------------- greedy

def _cheap_key(c: int, trump: int, keep: int) -> tuple[int, int, int, int]:
    """Order for "the cheapest card": non-trumps, non-partners, fewest points, lowest rank."""
    return (CARD_SUIT[c] == trump, (keep >> c) & 1, CARD_POINTS[c], -c)


def greedy(sit: Situation, legal: list[int]) -> int:
    """One-ply rules: exchange, meld (40 first), win cheaply, discard low, never close."""
    common = _common(sit, legal)
    if common is not None:
        return common
    if sit.phase == PRE_DRAW:
        return DRAW
    melds = meld_suits(legal)
    if melds:
        return MELD + best_meld(sit, melds)
    if sit.pending_meld >= 0:
        return sit.pending_meld * 6 + QUEEN
    trump = sit.trump
    plays = [a for a in legal if a < 24]
    keep = partners(sit.mine)
    if sit.phase != FOLLOW:
        return min(plays, key=lambda c: _cheap_key(c, trump, keep))
    lead = sit.lead
    winners = [c for c in plays if beats(lead, c, trump)]
    if sit.strict:
        if winners:
            return min(winners, key=lambda c: (CARD_POINTS[c], -c))
        return min(plays, key=lambda c: _cheap_key(c, trump, keep))
    in_suit = [c for c in winners if CARD_SUIT[c] == CARD_SUIT[lead]]
    if in_suit:
        return max(in_suit)  # the lowest card that heads the lead
    if CARD_POINTS[lead] >= 10 and CARD_SUIT[lead] != trump:
        trumps = [c for c in plays if CARD_SUIT[c] == trump]
        if trumps:
            return min(trumps, key=lambda c: ((keep >> c) & 1, CARD_POINTS[c], -c))
    return min(plays, key=lambda c: _cheap_key(c, trump, keep))


# ----------------------------------------------------------------------------- expert

def masters(sit: Situation, suit: int, mine: int | None = None) -> list[int]:
    """My cards of ``suit`` that no card the opponent may hold can head, highest first."""
    mine = sit.mine if mine is None else mine
    opp = sit.opp_possible & SUIT_MASK[suit]
    out = []
    for c in cards_of(mine & SUIT_MASK[suit]):
        if opp & ((1 << c) - 1):
            break
        out.append(c)
    return out


def sure_points(sit: Situation, mine: int) -> int:
    """Card points of the tricks ``mine`` wins for sure when leading in Phase B: the top
    trumps, then, once they must have drawn every trump the opponent may hold, the top
    cards of the other suits. The opponent's cards in those tricks are not counted."""
    trump = sit.trump
    top_trumps = masters(sit, trump, mine)
    points = sum(CARD_POINTS[c] for c in top_trumps)
    opp_trumps = min((sit.opp_possible & SUIT_MASK[trump]).bit_count(), sit.opp_size)
    if len(top_trumps) >= opp_trumps:
        for s in range(4):
            if s != trump:
                points += sum(CARD_POINTS[c] for c in masters(sit, s, mine))
    return points


def closing_is_safe(sit: Situation) -> bool:
    """Whether closing now reaches 66 for sure (a marriage on the closing lead counts
    when its king is a sure winner, since the king is then led)."""
    me = sit.seat
    sure = sure_points(sit, sit.mine)
    if not sure:
        return False
    total = sit.tp[me] + sit.mp[me] + sure
    if sit.rules.marriage_on_closing_lead and (sit.tw[me] or sit.rules.marriage_on_first_lead):
        kings = [s for s in range(4) if (partners(sit.mine) >> (s * 6 + KING)) & 1]
        bonus = [marriage_value(s, sit.trump) for s in kings if masters(sit, s)[:1] == [s * 6 + KING]]
        total += max(bonus, default=0)
    return total >= 66 - WEIGHTS["close_slack"]


def _keep_value(sit: Situation, c: int, keep: int) -> float:
    """What holding ``c`` is worth beyond its card points (trumps, marriages, masters)."""
    value = 0.0
    suit = CARD_SUIT[c]
    rank = c % 6
    if (keep >> c) & 1 and not sit.strict:
        value += (16.0 if suit == sit.trump else 9.0) * WEIGHTS["partner"]
    if suit == sit.trump:
        value += (6.0, 5.0, 3.5, 3.5, 3.0, 2.5)[rank] * WEIGHTS["trump_keep"]
        if rank == NINE and sit.up >= 0 and not sit.strict:
            value += CARD_POINTS[sit.up] * 0.5  # it can still be exchanged for the up-card
    elif rank == ACE:
        value += WEIGHTS["ace_keep"]
    elif rank == TEN and not sit.opp_possible & (1 << (suit * 6)):
        value += WEIGHTS["ace_keep"]
    return value


def _lead_value(sit: Situation, mine_after: int) -> float:
    """What winning the lead is worth in Phase A: the chance to meld and exchange."""
    if sit.strict:
        return 0.0
    value = WEIGHTS["lead_value"]
    keep = partners(mine_after)
    for s in range(4):
        if (keep >> (s * 6 + KING)) & 1:
            value = max(value, (40.0 if s == sit.trump else 20.0) * 0.6)
    return value


def _phase_a_follow(sit: Situation, plays: list[int]) -> int:
    me, opp = sit.seat, 1 - sit.seat
    lead, trump = sit.lead, sit.trump
    lp = CARD_POINTS[lead]
    keep = partners(sit.mine)
    my_base = sit.tp[me] + sit.mp[me]
    opp_base = sit.tp[opp] + sit.mp[opp]
    last_draw = sit.stock_size == 2 and sit.up >= 0  # the loser of this trick takes the up-card
    up_value = CARD_POINTS[sit.up] + _keep_value(sit, sit.up, 0) if last_draw else 0.0
    best, best_score = plays[0], -1e9
    for c in plays:
        pc = CARD_POINTS[c]
        k = _keep_value(sit, c, keep)
        if beats(lead, c, trump):
            score = lp + pc - k + _lead_value(sit, sit.mine & ~(1 << c))
            if my_base + lp + pc >= 66:
                score += WIN_66
        else:
            score = -(lp + pc) - k + up_value * WEIGHTS["up"]
            if opp_base + lp + pc >= 66:
                score -= WIN_66
        if score > best_score or (score == best_score and c > best):
            best, best_score = c, score
    return best


def _sure_now(sit: Situation, c: int) -> bool:
    """Whether leading ``c`` wins this trick whatever the opponent holds."""
    suit = CARD_SUIT[c]
    opp = sit.opp_possible
    if opp & SUIT_MASK[suit] & ((1 << c) - 1):
        return False
    if suit == sit.trump or not opp & SUIT_MASK[sit.trump]:
        return True
    # Phase B with the opponent's hand known exactly: holding the suit, it must follow.
    exact = sit.strict and not sit.closed
    return exact and bool(opp & SUIT_MASK[suit]) and sit.rules.must_head


def _phase_a_lead(sit: Situation, plays: list[int]) -> int:
    me = sit.seat
    trump = sit.trump
    keep = partners(sit.mine)
    need = 66 - (sit.tp[me] + sit.mp[me])
    sure = [c for c in plays if _sure_now(sit, c) and CARD_POINTS[c] >= need]
    if sure:
        return min(sure, key=lambda c: CARD_POINTS[c])

    def cost(c: int) -> float:
        suit, rank, pc = CARD_SUIT[c], c % 6, CARD_POINTS[c]
        if (keep >> c) & 1:
            return 30.0 + (20.0 if suit == trump else 0.0)
        if suit == trump:
            return WEIGHTS["lead_trump"] + pc + (5.0 if rank <= TEN else 0.0)
        if rank == ACE:
            return WEIGHTS["lead_ace"]
        if rank == TEN:
            return WEIGHTS["lead_ten"] if sit.opp_possible & (1 << (suit * 6)) else WEIGHTS["lead_ace"]
        return float(pc)

    return min(plays, key=lambda c: (cost(c), -c))


def _strict_lead(sit: Situation, plays: list[int]) -> int:
    trump = sit.trump
    sure = [c for c in plays if _sure_now(sit, c)]
    if sure:
        opp_has_trumps = bool(sit.opp_possible & SUIT_MASK[trump])
        sure_trumps = [c for c in sure if CARD_SUIT[c] == trump]
        if opp_has_trumps and sure_trumps:
            return sure_trumps[0]
        return max(sure, key=lambda c: (CARD_POINTS[c], -c))
    keep = partners(sit.mine)
    return min(plays, key=lambda c: _cheap_key(c, trump, keep))


def _strict_follow(sit: Situation, plays: list[int]) -> int:
    winners = [c for c in plays if beats(sit.lead, c, sit.trump)]
    if winners:
        return max(winners)  # the lowest winning card keeps the higher ones
    return min(plays, key=lambda c: _cheap_key(c, sit.trump, 0))


def expert(sit: Situation, legal: list[int]) -> int:
    """Card counting and hand-written strategy (see the module docstring of ``policies``)."""
    common = _common(sit, legal)
    if common is not None:
        return common
    me = sit.seat
    if sit.phase == PRE_DRAW:
        return CLOSE if closing_is_safe(sit) else DRAW
    melds = meld_suits(legal)
    if melds:
        suit = best_meld(sit, melds)
        value = marriage_value(suit, sit.trump)
        if sit.tw[me] and sit.total(me) + value >= 66:
            return MELD + suit  # then declare
    if CLOSE in legal and closing_is_safe(sit):
        return CLOSE
    if melds:
        suit = best_meld(sit, melds)
        if not sit.strict or masters(sit, suit)[:1] == [suit * 6 + KING]:
            return MELD + suit
    if sit.pending_meld >= 0:
        king = sit.pending_meld * 6 + KING
        return king if _sure_now(sit, king) else king + 1
    plays = [a for a in legal if a < 24]
    if sit.phase == FOLLOW:
        return _strict_follow(sit, plays) if sit.strict else _phase_a_follow(sit, plays)
    return _strict_lead(sit, plays) if sit.strict else _phase_a_lead(sit, plays)
