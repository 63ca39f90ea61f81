"""The 50 worked examples of docs/rules.md#worked-examples, one test function each.

Every position is built from an explicit deck (`Hand.deal`) and driven through the public
API only. Unless a test says otherwise the dealer is seat 1, so N (the non-dealer, who
leads trick 1) is seat 0 and D is seat 1, and trumps are hearts. Scripts use the tokens of
`decks.play`: `AS` = `play AS`, `*AS` = AS was played by the engine itself (R5.1).
"""
from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from arena.engine import Hand, HandResult, IllegalAction, Match, Rules

from .decks import (
    ALL_CARDS,
    canon,
    make_deck,
    phase_a_deck,
    play,
    plays,
    points,
    tricks_script,
)

N, D = 0, 1  # seats with dealer=1


def deal(deck: Sequence[str], rules: Rules | None = None, dealer: int = 1) -> Hand:
    """Deal an explicit deck (default rules, seat 1 deals)."""
    return Hand.deal(list(deck), dealer=dealer, rules=rules if rules is not None else Rules())


def hand_of(h: Hand, seat: int) -> list[str]:
    """The seat's cards (canonical order) as its own view shows them."""
    return list(h.view(seat)["hand"])


def assert_result(
    h: Hand,
    winner: int | None,
    game_points: int,
    reason: str,
    totals: tuple[int, int] | None = None,
    tricks: tuple[int, int] | None = None,
) -> HandResult:
    """Check a finished hand's result and the over-state of R13.5."""
    res = h.result
    assert res is not None, "hand should be over"
    assert h.is_over and h.to_move is None and h.legal_actions() == []
    got = (res.winner, res.game_points, str(res.reason))
    assert got == (winner, game_points, reason), f"result {res}"
    if totals is not None:
        assert tuple(res.totals) == totals, f"totals {res.totals}"
        assert (h.total(0), h.total(1)) == totals
    if tricks is not None:
        assert tuple(res.tricks) == tricks, f"tricks {res.tricks}"
    return res


def assert_illegal(h: Hand, action: str) -> None:
    """`action` raises IllegalAction and leaves the state unchanged."""
    before = (h.view(0), h.view(1), h.to_move)
    with pytest.raises(IllegalAction):
        h.apply(action)
    assert (h.view(0), h.view(1), h.to_move) == before


def pair(v: dict[str, Any], key: str) -> tuple[int, int]:
    """A two-int view field as a tuple."""
    a, b = v[key]
    return (a, b)


# ----------------------------------------------------------------------------- R6: tricks

EC1_CASES = [
    ("AS", "TC", "leader", 21),
    ("AS", "9H", "follower", 11),
    ("TD", "AD", "follower", 21),
    ("9H", "AS", "leader", 11),
    ("KH", "AH", "follower", 15),
    ("JC", "QS", "leader", 5),
    ("9S", "9C", "leader", 0),
]


@pytest.mark.parametrize(("lead", "follow", "who", "pts"), EC1_CASES)
def test_ec01_trick_winners_phase_a(lead: str, follow: str, who: str, pts: int) -> None:
    """R6.4/R6.5: trick winners in Phase A; a 0-point trick still counts as a trick."""
    up = next(c for c in ("QH", "JH", "TH") if c not in (lead, follow))
    h = deal(make_deck([lead], [follow], up))
    play(h, lead, follow)
    w = N if who == "leader" else D
    v = h.view(1 - w)
    assert v["tricks"] == [{"leader": N, "lead": lead, "follow": follow, "winner": w}]
    assert pair(v, "tricks_won") == ((1, 0) if w == N else (0, 1))
    assert pair(v, "trick_points") == ((pts, 0) if w == N else (0, pts))
    assert h.total(w) == pts and h.total(1 - w) == 0
    # the winner is in the PRE_DRAW window (trick 1, stock 12)
    assert h.to_move == w and h.legal_actions() == ["close", "draw"]


def test_ec02_phase_a_follower_may_play_anything() -> None:
    """R6.2: with the stock open (8 cards) every card of the follower is legal."""
    tricks = [("AC", "9D"), ("TC", "9S")]
    d_final = ["KS", "TH", "JD", "9C", "QC", "AD"]
    h = deal(phase_a_deck(tricks, ["AS"], d_final, "QH"))
    play(h, *tricks_script(tricks))
    assert h.view(N)["stock_size"] == 8
    play(h, "@0", "AS")
    assert h.to_move == D
    assert hand_of(h, D) == canon(d_final)
    assert h.legal_actions() == plays(d_final)
    assert h.legal_actions() == ["play QC", "play 9C", "play AD", "play JD", "play TH", "play KS"]


# Phase A for EC3: N wins tricks 1-6, D draws the up-card 9H after trick 6.
EC3_TRICKS = [("AD", "9D"), ("TD", "QD"), ("KD", "9S"), ("AH", "JS"), ("TH", "JH"), ("KH", "QH")]


def _ec3_hand(d_extra: str, n_extra: str, rules: Rules | None = None) -> Hand:
    """Position of EC3: trick 9, N leads KS, D holds QS AS 9H and `d_extra`."""
    d_final = ["QS", "AS", d_extra, "9C", "JC", "9H"]
    n_final = ["KS", "AC", "TC", "KC", "QC", n_extra]
    h = deal(phase_a_deck(EC3_TRICKS, n_final, d_final, "9H"), rules)
    play(h, *tricks_script(EC3_TRICKS))
    v = h.view(D)
    assert v["stock_size"] == 0 and v["trick_number"] == 7 and not v["closed"]
    assert hand_of(h, D) == canon(d_final)
    play(h, "AC", "9C", "TC", "*JC", "@0", "KS")
    return h


def test_ec03_phase_b_must_head() -> None:
    """R6.3(1): stock empty; lead KS; follower {QS, AS, 9H, JD} must head with AS."""
    h = _ec3_hand("JD", "TS")
    assert h.view(D)["trick_number"] == 10  # AS was forced and took trick 9
    assert h.view(D)["tricks"][-1] == {"leader": N, "lead": "KS", "follow": "AS", "winner": D}
    assert h.to_move == D and "play QS" in h.legal_actions()
    # must_head=false: any spade
    h = _ec3_hand("JD", "TS", Rules(must_head=False))
    assert h.to_move == D and h.legal_actions() == ["play AS", "play QS"]
    # with a second heading card the set is shown: {AS, TS}, not QS
    h = _ec3_hand("TS", "JD")
    assert h.to_move == D and h.legal_actions() == ["play AS", "play TS"]
    assert_illegal(h, "play QS")
    h = _ec3_hand("TS", "JD", Rules(must_head=False))
    assert h.legal_actions() == ["play AS", "play TS", "play QS"]


def test_ec04_phase_b_follow_low_rather_than_trump() -> None:
    """R6.3(2): lead AS; follower {QS, 9S, AH, TD} must follow with a spade, not trump."""
    d = ["QS", "9S", "AH", "TD", "9C", "JC"]
    h = deal(make_deck(["AC", "TC", "AS"], d, "JH"))
    play(h, "close", "AC", "9C", "TC", "*JC")
    assert hand_of(h, D) == canon(["QS", "9S", "AH", "TD"])
    play(h, "@0", "AS")
    assert h.legal_actions() == ["play QS", "play 9S"]
    assert_illegal(h, "play AH")
    assert_illegal(h, "play TD")


def test_ec05_phase_b_void_must_trump() -> None:
    """R6.3(3): lead AS; follower {9H, KH, JD, TC} is void in spades and must trump."""
    d = ["9H", "KH", "JD", "TC", "9D", "QC"]
    h = deal(make_deck(["AD", "AC", "AS"], d, "QH"))
    play(h, "close", "AD", "9D", "AC", "QC")
    assert hand_of(h, D) == canon(["9H", "KH", "JD", "TC"])
    play(h, "@0", "AS")
    assert h.legal_actions() == ["play KH", "play 9H"]
    assert_illegal(h, "play JD")


def test_ec06_phase_b_void_no_trump_any_card() -> None:
    """R6.3(4): lead AS; follower {JD, TC} (no spade, no trump) may play either; the leader wins."""
    h = deal(make_deck(["AH", "TH", "KH", "KS", "AS", "AC"], ["JD", "TC", "JH", "9H", "QD", "9C"], "QH"))
    play(h, "close", "AH", "9H", "TH", "*JH", "KH", "QD", "KS", "9C")
    assert hand_of(h, D) == ["TC", "JD"]
    play(h, "@0", "AS")
    assert h.legal_actions() == ["play TC", "play JD"]
    play(h, "TC")
    v = h.view(N)
    assert v["tricks"][-1] == {"leader": N, "lead": "AS", "follow": "TC", "winner": N}
    assert pair(v, "tricks_won") == (5, 0)


def test_ec07_phase_b_trump_led() -> None:
    """R6.3 with a trump lead QH: must head, else follow, else any card."""
    # follower {KH, 9H, AS}: only KH (forced, so played by the engine)
    h = deal(make_deck(["AD", "TD", "KD", "QH"], ["QD", "JD", "9D", "KH", "9H", "AS"], "JH"))
    play(h, "close", "AD", "9D", "TD", "JD", "KD", "*QD")
    assert hand_of(h, D) == ["KH", "9H", "AS"]
    play(h, "QH", "*KH")
    assert h.view(N)["tricks"][-1] == {"leader": N, "lead": "QH", "follow": "KH", "winner": D}
    # follower {9H, JH, AS}: {JH, 9H}
    h = deal(make_deck(["AD", "TD", "KD", "QH"], ["QD", "JD", "9D", "9H", "JH", "AS"], "TH"))
    play(h, "close", "AD", "9D", "TD", "JD", "KD", "*QD")
    assert hand_of(h, D) == ["JH", "9H", "AS"]
    play(h, "QH")
    assert h.legal_actions() == ["play JH", "play 9H"]
    # follower {AS, TC}: both
    h = deal(make_deck(["AD", "TD", "KD", "AH", "QH"], ["QD", "JD", "9D", "9C", "AS", "TC"], "KH"))
    play(h, "close", "AD", "9D", "TD", "JD", "KD", "*QD", "AH")
    assert h.legal_actions() == ["play TC", "play 9C", "play AS"]
    play(h, "9C", "QH")
    assert h.legal_actions() == ["play TC", "play AS"]


def test_ec08_close_switches_rules_at_once() -> None:
    """R11.3: P closes after trick 2's draw and leads AC; O must follow clubs at once."""
    tricks = [("AS", "9S"), ("TS", "KS")]
    o_hand = ["KC", "9C", "TH", "AD", "JS", "QS"]
    h = deal(phase_a_deck(tricks, ["AC"], o_hand, "QH"))
    play(h, *tricks_script(tricks))
    assert h.view(N)["stock_size"] == 8
    play(h, "@0", "close")
    v = h.view(D)
    assert v["closed"] and v["closer"] == N and v["stock_size"] == 0 and v["up_card"] is None
    play(h, "AC")
    assert hand_of(h, D) == canon(o_hand)
    assert h.legal_actions() == ["play KC", "play 9C"]
    assert_illegal(h, "play TH")


# --------------------------------------------------------------------- R3/R7: deal, draw

EC9_DECK = [
    "9C", "KD", "JS", "AC", "QS", "TD", "JD", "AS", "9S", "QC", "KS", "TC",
    "QH", "AD", "KH", "9D", "JC", "TH", "AH", "KC", "JH", "9H", "TS", "QD",
]  # fmt: skip


def test_ec09_canonical_deal() -> None:
    """R3.2: the canonical deal and the first draw (D wins trick 1: D gets c13, N c14)."""
    c = EC9_DECK
    assert sorted(c) == sorted(ALL_CARDS)
    h = Hand.deal(list(c), dealer=0, rules=Rules())  # seat 1 is N here
    n_cards = [c[0], c[1], c[2], c[6], c[7], c[8]]
    d_cards = [c[3], c[4], c[5], c[9], c[10], c[11]]
    assert hand_of(h, 1) == canon(n_cards)
    assert hand_of(h, 0) == canon(d_cards)
    v = h.view(0)
    assert v["up_card"] == c[12] == "QH" and v["trump"] == "H" and v["stock_size"] == 12
    assert v["dealer"] == 0 and h.to_move == 1 and v["trick_number"] == 1
    play(h, "9C", "AC")  # N leads 9C, D wins with AC
    assert h.to_move == 0 and h.legal_actions() == ["close", "draw"]
    play(h, "draw")
    assert hand_of(h, 0) == canon([x for x in d_cards if x != "AC"] + [c[13]])
    assert hand_of(h, 1) == canon([x for x in n_cards if x != "9C"] + [c[14]])
    assert h.view(1)["stock_size"] == 10
    # the other seating: dealer 1 -> seat 0 is N and gets c0 c1 c2 c6 c7 c8
    h = Hand.deal(list(c), dealer=1, rules=Rules())
    assert hand_of(h, 0) == canon(n_cards) and hand_of(h, 1) == canon(d_cards)
    assert h.to_move == 0


# N wins tricks 1-5 and leads trick 6, D wins trick 6; the stock is then [JC, TH(up)].
EC10_TRICKS = [("AC", "9C"), ("TC", "QC"), ("AD", "9D"), ("TD", "QD"), ("KD", "9S"), ("JS", "AS")]
EC10_N_FINAL = ["AH", "KH", "QH", "JH", "TS", "TH"]
EC10_D_FINAL = ["KS", "QS", "9H", "JD", "KC", "JC"]


def _ec10_hand(n_tokens: int | None = None, rules: Rules | None = None) -> Hand:
    """The EC10 deal, with the first `n_tokens` tokens of its Phase-A script applied."""
    h = deal(phase_a_deck(EC10_TRICKS, EC10_N_FINAL, EC10_D_FINAL, "TH"), rules)
    script = tricks_script(EC10_TRICKS)
    play(h, *script[:n_tokens])
    return h


def test_ec10_last_draw() -> None:
    """R7.2/R7.4/R10.3: after trick 6 the winner gets the last face-down card, the loser
    the up-card (publicly); at trick 7 no marriage, exchange or close is offered."""
    h = _ec10_hand(len(tricks_script(EC10_TRICKS)) - 2)  # lead to trick 6
    v = h.view(N)
    assert v["stock_size"] == 2 and v["up_card"] == "TH" and v["trick_number"] == 6
    play(h, "JS", "AS")
    assert h.to_move == D
    assert hand_of(h, D) == canon(EC10_D_FINAL)  # D drew JC
    assert "JC" in hand_of(h, D) and "TH" in hand_of(h, N)
    vd, vn = h.view(D), h.view(N)
    assert vd["stock_size"] == 0 and vd["up_card"] is None and not vd["closed"]
    assert vd["trick_number"] == 7
    assert "TH" in vd["opponent_known"]  # the up-card drawn by the loser is public
    assert "JC" not in vn["opponent_known"]
    d_draws_seen_by_n = [e for e in vn["events"] if e["type"] == "draw" and e["seat"] == D]
    assert d_draws_seen_by_n[-1].get("card") is None  # D's last draw is private
    n_draws_seen_by_d = [e for e in vd["events"] if e["type"] == "draw" and e["seat"] == N]
    assert n_draws_seen_by_d[-1].get("card") == "TH"
    # D holds KS QS, the trump 9 and has won a trick: still only plain leads + declare
    assert h.legal_actions() == ["declare"] + plays(EC10_D_FINAL)


def test_ec11_no_exchange_before_a_trick_is_won() -> None:
    """R8.1(c): N holds 9H at the lead to trick 1 (up-card AH): no exchange."""
    n = ["9H", "AC", "KD", "JS", "TC", "9D"]
    h = deal(make_deck(n, [], "AH"))
    assert h.to_move == N
    assert h.legal_actions() == ["close", "declare"] + plays(n)
    assert_illegal(h, "exchange")
    play(h, "AC")
    assert h.to_move == D and all(a.startswith("play ") for a in h.legal_actions())
    assert len(h.legal_actions()) == 6


def test_ec12_no_exchange_for_the_follower() -> None:
    """R8.1(b): P won trick 1, lost trick 2; while O leads trick 3, P with 9H cannot exchange."""
    tricks = [("AC", "9C"), ("9S", "AS")]
    h = deal(phase_a_deck(tricks, ["9H", "KS", "QD", "JH"], ["JD"], "QH"))
    play(h, *tricks_script(tricks))
    assert h.to_move == D and h.view(N)["legal_actions"] == []
    play(h, "JD")
    assert h.to_move == N and "9H" in hand_of(h, N)
    assert h.legal_actions() == plays(hand_of(h, N))
    assert_illegal(h, "exchange")


EC13_TRICKS = [("TD", "AD"), ("JC", "KC")]  # D wins trick 1, N wins trick 2
EC13_N = ["9H", "AC", "TC", "JD", "QS", "9S"]


def test_ec13_exchange_effects() -> None:
    """R8.2/R8.4: the exchange swaps 9H with the up-card KH, keeps stock and trump, is
    public, and P stays on lead (close, lead or declare)."""
    h = deal(phase_a_deck(EC13_TRICKS, EC13_N, [], "KH"))
    play(h, *tricks_script(EC13_TRICKS))
    v = h.view(N)
    assert v["stock_size"] == 8 and v["up_card"] == "KH" and hand_of(h, N) == canon(EC13_N)
    assert h.legal_actions() == ["exchange", "close", "declare"] + plays(EC13_N)
    play(h, "exchange")
    after = ["KH", "AC", "TC", "JD", "QS", "9S"]
    assert hand_of(h, N) == canon(after)
    for seat in (N, D):
        v = h.view(seat)
        assert v["up_card"] == "9H" and v["stock_size"] == 8 and v["trump"] == "H"
        assert any(e["type"] == "exchange" and e["seat"] == N for e in v["events"])
    assert "KH" in h.view(D)["opponent_known"]
    assert h.to_move == N
    assert h.legal_actions() == ["close", "declare"] + plays(after)


def test_ec14_exchange_only_after_the_refill() -> None:
    """R8.1(e): not in the PRE_DRAW window after trick 3 (stock 8), but after the draw."""
    tricks = [("AC", "9C"), ("TC", "JC"), ("AD", "9D")]
    h = deal(phase_a_deck(tricks, ["9H", "AS", "KS"], [], "QH"))
    play(h, *tricks_script(tricks, last_draw=False))
    assert h.to_move == N and "9H" in hand_of(h, N)
    assert h.view(N)["stock_size"] == 8
    assert h.legal_actions() == ["close", "draw"]
    assert_illegal(h, "exchange")
    play(h, "draw")
    assert h.view(N)["stock_size"] == 6 and h.to_move == N
    assert "exchange" in h.legal_actions()


EC15_TRICKS = [("AC", "9C"), ("TC", "JC"), ("AD", "9D"), ("TD", "JD"), ("KC", "QD")]


def _ec15_hand(rules: Rules | None = None, upto_trick: int = 5) -> Hand:
    """N won tricks 1-5 holding 9H; stock [KH, QH(up)] after trick 5's draw."""
    n_final = ["9H", "AS", "TS", "AH", "TH", "KS"]
    d_final = ["9S", "JS", "QS", "QC", "KD", "JH"]
    h = deal(phase_a_deck(EC15_TRICKS, n_final, d_final, "QH", stock_rest=["KH"]), rules)
    play(h, *tricks_script(EC15_TRICKS[:upto_trick]))
    return h


def test_ec15_exchange_with_stock_two() -> None:
    """R8.1(f): exchange at the lead to trick 6 (stock 2) is legal by default; the loser of
    trick 6 then draws 9H. With exchange_min_stock=4 it is not legal at stock 2."""
    h = _ec15_hand()
    v = h.view(N)
    assert v["stock_size"] == 2 and v["up_card"] == "QH" and v["trick_number"] == 6
    assert h.to_move == N and "exchange" in h.legal_actions()
    play(h, "exchange")
    assert h.view(D)["up_card"] == "9H" and "QH" in hand_of(h, N)
    play(h, "AS", "9S")  # N wins trick 6: N draws KH, D (loser) draws 9H
    assert "9H" in hand_of(h, D) and "KH" in hand_of(h, N) and "QH" in hand_of(h, N)
    assert "9H" in h.view(N)["opponent_known"]
    assert h.view(N)["stock_size"] == 0
    # exchange_min_stock=4: legal at the lead to trick 5 (stock 4), not at trick 6 (stock 2)
    rules = Rules(exchange_min_stock=4)
    h = _ec15_hand(rules, upto_trick=4)
    assert h.view(N)["stock_size"] == 4 and "exchange" in h.legal_actions()
    play(h, "KC", "QD", "draw")
    assert h.view(N)["stock_size"] == 2 and "9H" in hand_of(h, N)
    assert "exchange" not in h.legal_actions()
    assert_illegal(h, "exchange")


def test_ec16_no_exchange_possible() -> None:
    """R8.1(d)/R8.3: no exchange when the up-card is 9H, the stock is closed, or exhausted."""
    # the up-card is the 9 of trumps
    h = deal(phase_a_deck([("AC", "9C")], [], [], "9H"))
    play(h, "AC", "9C", "draw")
    assert h.to_move == N and "exchange" not in h.legal_actions()
    # the stock is closed: D wins trick 1 holding 9H and closes before the draw
    deck = make_deck(["9C"], ["AC", "9H"], "QH")
    h = deal(deck)
    play(h, "9C", "AC", "close")
    assert h.to_move == D and "9H" in hand_of(h, D)
    assert "exchange" not in h.legal_actions()
    assert_illegal(h, "exchange")
    h = deal(deck)  # control: after the draw instead, the exchange is offered
    play(h, "9C", "AC", "draw")
    assert "exchange" in h.legal_actions()
    # the stock is exhausted: lead to trick 7, D holds 9H and has won trick 6
    h = _ec10_hand()
    assert h.to_move == D and "9H" in hand_of(h, D)
    assert "exchange" not in h.legal_actions()


# Trump spades, up-card KS: N wins trick 1 with TC over 9C.
EC17_N = ["9S", "QS", "AD", "JD", "9H", "QC"]
EC17_D = ["AS", "TS", "AH", "TH", "KD", "KC"]


def _ec17_hand(rules: Rules | None = None) -> Hand:
    h = deal(phase_a_deck([("TC", "9C")], EC17_N, EC17_D, "KS"), rules)
    play(h, "TC", "9C", "draw")
    return h


def test_ec17_pagat_chain_exchange_close_meld() -> None:
    """R8.4/R11.6: exchange, close, lead QS announcing 40 in one lead; a failed close with
    the opponent trickless at the close gives the opponent 3."""
    h = _ec17_hand()
    v = h.view(N)
    assert pair(v, "trick_points") == (10, 0) and pair(v, "tricks_won") == (1, 0)
    assert v["stock_size"] == 10 and v["trump"] == "S"
    assert hand_of(h, N) == canon(EC17_N)
    assert h.legal_actions() == ["exchange", "close", "declare"] + plays(EC17_N)
    play(h, "exchange")
    with_ks = ["KS", "QS", "AD", "JD", "9H", "QC"]
    assert h.view(D)["up_card"] == "9S" and hand_of(h, N) == canon(with_ks)
    assert h.legal_actions() == ["close", "meld S", "declare"] + plays(with_ks)
    play(h, "close")
    assert h.view(D)["closed"] and h.view(D)["closer"] == N
    assert h.legal_actions() == ["meld S", "declare"] + plays(with_ks)
    play(h, "meld S")
    assert h.legal_actions() == ["declare", "play KS", "play QS"]
    assert h.total(N) == 50
    play(h, "QS")
    assert h.view(D)["marriages"] == [{"seat": N, "suit": "S", "value": 40, "valid": True}]
    # play on: N fails to reach 66, nobody declares
    play(h, "AS", "TS", "*KS", "AH", "*9H", "TH", "JD", "KD", "*AD")
    assert h.total(N) == 65 and h.to_move == N
    play(h, "QC", "*KC", "@1", "pass")
    assert_result(h, D, 3, "close_failed", totals=(65, 58), tricks=(2, 5))


def test_ec18_close_then_exchange_is_rejected() -> None:
    """R5.3: after `close`, `exchange` is no longer offered in the same lead."""
    h = _ec17_hand()
    play(h, "close")
    assert h.legal_actions() == ["declare"] + plays(EC17_N)
    assert_illegal(h, "exchange")


# --------------------------------------------------------------------------- R10 marriages


def test_ec19_pending_marriage_later_validated() -> None:
    """R10.6: N's marriage at trick 1 is pending until N wins a trick (even later)."""
    tricks = [("KD", "AD"), ("AH", "9H"), ("TH", "JH"), ("9C", "JC")]
    h = deal(phase_a_deck(tricks, ["QD"], [], "QS"))
    play(h, "meld D", "KD", "AD")
    v = h.view(D)
    assert pair(v, "trick_points") == (0, 15) and pair(v, "tricks_won") == (0, 1)
    assert v["marriages"] == [{"seat": N, "suit": "D", "value": 20, "valid": False}]
    assert h.total(N) == 0 and pair(v, "totals") == (0, 15)
    play(h, "draw", "AH", "9H", "draw", "TH", "JH", "draw")
    assert h.total(N) == 0 and h.view(N)["tricks_won"][D] == 3
    play(h, "9C", "JC")
    v = h.view(D)
    assert pair(v, "trick_points")[N] == 2 and pair(v, "tricks_won")[N] == 1
    assert v["marriages"] == [{"seat": N, "suit": "D", "value": 20, "valid": True}]
    assert h.total(N) == 22 and pair(v, "totals")[N] == 22


def test_ec20_pending_marriage_never_validated() -> None:
    """R10.6/R13.0: N's 40 at trick 1 never counts; D declares with 70 and gets 3."""
    tricks = [("QS", "AS"), ("AC", "TC"), ("AD", "TD"), ("TS", "KS"), ("9H", "9C")]
    h = deal(phase_a_deck(tricks, [], [], "JS"))
    play(h, "meld S", *tricks_script(tricks))
    assert h.to_move == D and h.total(D) == 70 and h.total(N) == 0
    assert h.view(N)["marriages"] == [{"seat": N, "suit": "S", "value": 40, "valid": False}]
    play(h, "declare")
    assert_result(h, D, 3, "declared", totals=(0, 70), tricks=(0, 5))


def test_ec21_no_marriage_when_following() -> None:
    """R10.2: the follower holding KC QC cannot announce; playing KC scores only 4."""
    h = deal(make_deck(["9C"], ["KC", "QC"], "QH"))
    play(h, "9C")
    assert h.to_move == D and all(a.startswith("play ") for a in h.legal_actions())
    assert_illegal(h, "meld C")
    play(h, "KC")
    v = h.view(N)
    assert v["marriages"] == [] and h.total(D) == 4


def test_ec22_no_marriage_in_phase_b() -> None:
    """R10.3: at the lead to trick 7 (stock exhausted) KS QS give only plain leads."""
    h = _ec10_hand()
    assert h.to_move == D and {"KS", "QS"} <= set(hand_of(h, D))
    assert not any(a.startswith("meld") for a in h.legal_actions())
    assert_illegal(h, "meld S")
    play(h, "KS")
    assert h.view(N)["marriages"] == []


def test_ec23_no_marriage_at_later_leads_after_a_close() -> None:
    """R10.3/R11.6: after closing at the lead to trick 3, KD QD may be announced on that
    closing lead only, not at the lead to trick 4."""
    tricks = [("AS", "9S"), ("TS", "JS")]
    n_final = ["KD", "QD", "AC", "KH", "JD", "TH"]
    d_final = ["9C", "JC", "AD", "TD", "9D", "QS"]
    h = deal(phase_a_deck(tricks, n_final, d_final, "QH"))
    play(h, *tricks_script(tricks), "close")
    assert "meld D" in h.legal_actions()
    play(h, "AC", "9C")
    assert h.to_move == N and h.view(N)["trick_number"] == 4
    assert h.legal_actions() == ["declare", "play KD", "play QD", "play JD", "play TH", "play KH"]
    assert_illegal(h, "meld D")


def test_ec24_one_marriage_per_lead() -> None:
    """R10.4: with KS QS KD QD on lead, one marriage now, the other at a later lead."""
    tricks = [("AC", "9D"), ("QS", "9C"), ("KD", "JC")]
    h = deal(phase_a_deck(tricks, ["KS", "QD", "AH", "TH", "9S", "JS"], [], "JH"))
    play(h, "AC", "9D", "draw")
    legal = h.legal_actions()
    assert "meld D" in legal and "meld S" in legal and "meld H" not in legal
    play(h, "meld S")
    assert h.legal_actions() == ["declare", "play KS", "play QS"]
    assert_illegal(h, "meld D")
    play(h, "QS", "9C", "draw")
    assert "meld D" in h.legal_actions() and "meld S" not in h.legal_actions()
    play(h, "meld D", "KD", "JC", "draw")
    v = h.view(D)
    assert v["marriages"] == [
        {"seat": N, "suit": "S", "value": 20, "valid": True},
        {"seat": N, "suit": "D", "value": 20, "valid": True},
    ]
    assert pair(v, "trick_points")[N] == 20 and h.total(N) == 60


@pytest.mark.parametrize(("led", "shown"), [("QS", "KS"), ("KS", "QS")])
def test_ec25_either_marriage_card_may_be_led(led: str, shown: str) -> None:
    """R10.1/R10.7: either card of the pair may be led; 20 either way; the other is shown."""
    h = deal(phase_a_deck([("AC", "9C")], ["KS", "QS"], [], "JH"))
    play(h, "AC", "9C", "draw", "meld S")
    assert h.view(D)["pending_meld"] == "S"
    assert h.legal_actions() == ["declare", "play KS", "play QS"]
    assert h.total(N) == 31  # 11 + 20, valid at once (N has a trick)
    play(h, led)
    v = h.view(D)
    assert v["lead"] == led and v["opponent_known"] == [shown]
    assert v["marriages"] == [{"seat": N, "suit": "S", "value": 20, "valid": True}]
    assert any(e["type"] == "meld" and e["seat"] == N for e in v["events"])


# --------------------------------------------------------------------- R12/R13: declaring


def test_ec26_meld_and_go_out() -> None:
    """R12.3: meld 40 and declare without leading a card: 48 + 40 = 88, O has 30 -> 2."""
    tricks = [("KS", "AS"), ("AD", "KD"), ("TC", "AC"), ("TD", "TS"), ("KC", "QC")]
    h = deal(phase_a_deck(tricks, ["KH", "QH"], [], "JH"))
    play(h, *tricks_script(tricks))
    v = h.view(N)
    assert v["stock_size"] == 2 and h.to_move == N
    assert pair(v, "trick_points") == (48, 30) and pair(v, "tricks_won") == (3, 2)
    play(h, "meld H")
    assert h.total(N) == 88
    play(h, "declare")
    assert_result(h, N, 2, "declared", totals=(88, 30), tricks=(3, 2))
    assert len(h.view(N)["tricks"]) == 5 and h.view(N)["lead"] is None


@pytest.mark.parametrize(
    ("opp_has_trick", "option", "expected"),
    [(True, "2or3", 2), (True, "flat2", 2), (False, "2or3", 3), (False, "flat2", 2)],
)
def test_ec27_meld_and_go_out_short(opp_has_trick: bool, option: str, expected: int) -> None:
    """R12.3/R13.2(b): tp 40 + 20 = 60 declared -> false; O gets 2, or 3 if trickless
    (false_declaration_points=2or3), flat 2 under flat2."""
    if opp_has_trick:
        tricks = [("9C", "JC"), ("TD", "TH"), ("TC", "TS")]
    else:
        tricks = [("TC", "TS"), ("TH", "TD")]
    rules = Rules(false_declaration_points=option)
    h = deal(phase_a_deck(tricks, ["KD", "QD"], [], "QH"), rules)
    play(h, *tricks_script(tricks))
    v = h.view(N)
    assert pair(v, "trick_points")[N] == 40 and pair(v, "tricks_won")[N] == 2
    assert pair(v, "tricks_won")[D] == (1 if opp_has_trick else 0)
    play(h, "@0", "meld D")
    assert h.total(N) == 60
    play(h, "declare")
    assert_result(h, D, expected, "false_declaration", totals=(60, 2 if opp_has_trick else 0))


EC28_CASES: dict[str, tuple[list[tuple[str, str]], list[str], list[str], list[str], int, int, int]] = {
    # name: (tricks, n_final, d_final, script, declarer, O's total, O's tricks)
    "O_33": (
        [("TS", "AS"), ("TD", "JD"), ("9C", "AC"), ("KH", "KS"), ("AD", "9D")],
        ["QH"], [],
        ["TS", "AS", "draw", "TD", "JD", "draw", "9C", "AC", "draw",
         "meld H", "KH", "KS", "draw", "AD", "9D", "draw"],
        N, 33, 2,
    ),
    "O_32": (
        [("TS", "AS"), ("AD", "9D"), ("9C", "AC"), ("KH", "QS"), ("TD", "JD")],
        ["QH"], [],
        ["TS", "AS", "draw", "AD", "9D", "draw", "9C", "AC", "draw",
         "meld H", "KH", "QS", "draw", "TD", "JD", "draw"],
        N, 32, 2,
    ),
    "O_zero_point_trick": (
        [("9S", "9C"), ("9D", "AD"), ("KH", "TS"), ("QC", "JC")],
        [], ["QH"],
        ["9S", "9C", "draw", "9D", "AD", "draw", "meld H", "KH", "TS", "draw", "QC", "JC", "draw"],
        D, 0, 1,
    ),
    "O_no_trick": (
        [("AC", "9C"), ("KH", "9D"), ("AD", "KD")],
        ["QH"], [],
        ["AC", "9C", "draw", "meld H", "KH", "9D", "draw", "AD", "KD", "draw"],
        N, 0, 0,
    ),
    "O_13_plus_marriage": (
        [("JC", "AC"), ("QS", "AS"), ("KH", "9D"), ("TD", "JD")],
        ["QH"], ["KS"],
        ["JC", "AC", "draw", "meld S", "QS", "AS", "draw", "meld H", "KH", "9D", "draw",
         "TD", "JD", "draw"],
        N, 33, 1,
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("name", "schneider_counts_marriages", "expected"),
    [
        ("O_33", True, 1),
        ("O_32", True, 2),
        ("O_zero_point_trick", True, 2),
        ("O_no_trick", True, 3),
        ("O_13_plus_marriage", True, 1),
        ("O_13_plus_marriage", False, 2),
    ],
)
def test_ec28_game_point_tiers(name: str, schneider_counts_marriages: bool, expected: int) -> None:
    """R13.0: a correct declaration at 70 scores 1 / 2 / 3 by O's total and tricks;
    Schwarz counts tricks, not points; O's valid marriages count toward 33 (option)."""
    tricks, n_final, d_final, script, p, o_total, o_tricks = EC28_CASES[name]
    rules = Rules(schneider_counts_marriages=schneider_counts_marriages)
    h = deal(phase_a_deck(tricks, n_final, d_final, "JH"), rules)
    play(h, *script)
    o = 1 - p
    assert h.to_move == p and h.total(p) == 70 and h.total(o) == o_total
    assert h.view(p)["tricks_won"][o] == o_tricks
    play(h, "declare")
    totals = (70, o_total) if p == N else (o_total, 70)
    assert_result(h, p, expected, "declared", totals=totals)


EC29_TRICKS = [("TS", "AS"), ("KD", "AD"), ("QH", "JS"), ("JC", "KC"), ("9D", "TD"), ("TC", "AC")]
EC29_SCRIPT = [
    "TS", "AS", "draw", "meld D", "KD", "AD", "draw", "meld H", "QH", "JS", "draw",
    "JC", "KC", "draw", "9D", "TD", "draw",
]  # fmt: skip


def _ec29_hand() -> Hand:
    """A (=N) has 70 after trick 5; A leads trick 6 (TC) without declaring; B (=D) wins it
    with AC and has 48 + 20 = 68."""
    n_final = ["KH", "AH", "9H", "QS", "9C", "JH"]
    d_final = ["QD", "TH", "QC", "KS", "9S", "JD"]
    h = deal(phase_a_deck(EC29_TRICKS, n_final, d_final, "JH"))
    play(h, *EC29_SCRIPT)
    assert h.to_move == N and h.total(N) == 70 and "declare" in h.legal_actions()
    assert pair(h.view(N), "trick_points") == (30, 27) and h.total(D) == 47
    play(h, "TC", "AC")
    assert h.to_move == D and h.total(D) == 68 and h.total(N) == 70
    assert h.view(N)["legal_actions"] == []  # A cannot declare while B is on lead
    return h


def test_ec29_first_correct_declarer_wins() -> None:
    """R12.4: B declares first with 68 and wins 1 although A has 70."""
    h = _ec29_hand()
    play(h, "declare")
    assert_result(h, D, 1, "declared", totals=(70, 68))


def test_ec30_follower_cannot_declare() -> None:
    """R12.1: P with 70 following has only play actions; after winning a trick P declares."""
    h = _ec29_hand()
    play(h, "JD")
    assert h.to_move == N and h.total(N) == 70
    assert h.legal_actions() == ["play AH", "play KH", "play JH", "play 9H"]
    assert_illegal(h, "declare")
    play(h, "9H")
    assert h.to_move == N and h.total(N) == 72 and "declare" in h.legal_actions()
    play(h, "declare")
    assert_result(h, N, 1, "declared", totals=(72, 68))


@pytest.mark.parametrize(("option", "expected"), [("2or3", 3), ("flat2", 2)])
def test_ec31_false_declaration_at_the_first_lead(option: str, expected: int) -> None:
    """R12.1/R13.2(b): N declares with 0 before trick 1: D (trickless) gets 3, or 2 (flat2);
    R13.5: a finished hand rejects every action."""
    h = deal(make_deck([], [], "QH"), Rules(false_declaration_points=option))
    assert h.to_move == N and "declare" in h.legal_actions()
    play(h, "declare")
    assert_result(h, D, expected, "false_declaration", totals=(0, 0), tricks=(0, 0))
    for bad in ("declare", "pass", "play " + hand_of(h, N)[0], "", "play", "draw now"):
        with pytest.raises(IllegalAction):
            h.apply(bad)


EC32_TRICKS = [("TC", "AC"), ("AD", "TD"), ("KS", "QC"), ("QH", "JD"), ("QD", "QS"), ("KC", "KH")]
EC32_N = ["AH", "TH", "AS", "TS", "KD", "JC"]
EC32_D = ["9H", "9S", "JS", "9D", "9C", "JH"]


@pytest.mark.parametrize("final", ["pass", "declare"])
def test_ec32_last_trick_bonus_swing(final: str) -> None:
    """R9/R13.3(b): P 58, O 60 before trick 12; P wins JC + 9C: 58 + 2 + 10 = 70 -> P wins 1."""
    h = deal(phase_a_deck(EC32_TRICKS, EC32_N, EC32_D, "JH"))
    play(h, *tricks_script(EC32_TRICKS))
    assert h.to_move == N and hand_of(h, N) == canon(EC32_N) and hand_of(h, D) == canon(EC32_D)
    play(h, "AH", "9H", "TH", "*JH", "AS", "9S", "TS", "*JS", "KD", "*9D")
    assert h.view(N)["trick_number"] == 12
    assert (h.total(N), h.total(D)) == (58, 60)
    assert h.view(D)["marriages"] == [] and not h.view(D)["closed"]
    play(h, "JC", "*9C")
    assert (h.total(N), h.total(D)) == (70, 60)
    assert h.to_move == N and h.legal_actions() == ["declare", "pass"]
    play(h, final)
    reason = "played_out" if final == "pass" else "declared"
    assert_result(h, N, 1, reason, totals=(70, 60), tricks=(7, 5))


# --------------------------------------------------------------- matches: R2, R13.4, R14

Accept = Callable[[HandResult], bool]


def _random_line(hand: Hand, accept: Accept, rng: random.Random, tries: int, declare_p: float) -> list[str] | None:
    """Search random playouts of a copy of `hand` for an action line whose result passes
    `accept`. The policy plays, draws and passes, and declares with probability declare_p."""
    for _ in range(tries):
        h = hand.copy()
        line: list[str] = []
        while not h.is_over:
            legal = h.legal_actions()
            if "declare" in legal and rng.random() < declare_p:
                a = "declare"
            else:
                quiet = [x for x in legal if x.startswith("play ") or x in ("draw", "pass")]
                a = rng.choice(quiet or legal)
            h.apply(a)
            line.append(a)
        assert h.result is not None
        if accept(h.result):
            return line
    return None


def win(seat: int | None, pts: int) -> tuple[Accept, float]:
    """Plan step: `seat` (None = either seat) wins the hand with `pts` game points."""

    def ok(r: HandResult) -> bool:
        return r.winner is not None and (seat is None or r.winner == seat) and r.game_points == pts

    return ok, 0.25


def tie() -> tuple[Accept, float]:
    """Plan step: a 65-65 tie (no marriages, never closed: the quiet policy never melds)."""

    def ok(r: HandResult) -> bool:
        return r.winner is None and str(r.reason) == "tie" and tuple(r.totals) == (65, 65)

    return ok, 0.0


def run_plan(rules: Rules, plan: list[tuple[Accept, float]]) -> tuple[Match, list[dict[str, Any]]]:
    """Play a seeded match hand by hand so that hand i ends as plan[i] demands, trying match
    seeds in order until every step can be realised. Returns the match and, per hand, the
    state before it (dealer, score, carry) and its result."""
    for seed in range(60):
        m = Match(rules, seed=seed)
        log: list[dict[str, Any]] = []
        for i, (accept, declare_p) in enumerate(plan):
            rng = random.Random(seed * 100 + i)
            line = _random_line(m.hand, accept, rng, tries=300, declare_p=declare_p)
            if line is None:
                break
            before = {
                "hand_index": m.hand_index,
                "dealer": m.hand.dealer,
                "to_move": m.hand.to_move,
                "score": tuple(m.score),
                "carry": m.carry,
            }
            results = [m.apply(a) for a in line]
            assert all(r is None for r in results[:-1]) and results[-1] is not None
            log.append({**before, "result": results[-1], "score_after": tuple(m.score)})
        else:
            return m, log
    pytest.fail("no seed realises the plan")


def test_ec33_tie_and_carry() -> None:
    """R14.2/R13.4: a 65-65 tie scores nothing, carry 1, the deal alternates; the next
    winner with 2 receives 3."""
    m, log = run_plan(Rules(first_dealer=0), [tie(), win(None, 2)])
    t, nxt = log
    res = t["result"]
    assert (res.winner, res.game_points, str(res.reason)) == (None, 0, "tie")
    assert tuple(res.totals) == (65, 65)
    assert t["score_after"] == (0, 0)
    assert nxt["carry"] == 1 and nxt["hand_index"] == 1
    assert t["dealer"] == 0 and nxt["dealer"] == 1
    w = nxt["result"].winner
    assert nxt["result"].game_points == 2
    assert nxt["score_after"][w] == 3 and nxt["score_after"][1 - w] == 0
    assert m.carry == 0 and m.results[0] == res


@pytest.mark.parametrize(("tie_rule", "carry_after_two"), [("carry_accumulate", 2), ("carry_max1", 1)])
def test_ec34_consecutive_ties(tie_rule: str, carry_after_two: int) -> None:
    """R14.2: two ties in a row carry 2 (carry_max1: 1); the next winner gets points + carry."""
    m, log = run_plan(Rules(first_dealer=0, tie_rule=tie_rule), [tie(), tie(), win(None, 1)])
    assert [e["carry"] for e in log] == [0, 1, carry_after_two]
    assert log[1]["score_after"] == (0, 0)
    w = log[2]["result"].winner
    assert log[2]["result"].game_points == 1
    assert log[2]["score_after"][w] == 1 + carry_after_two and log[2]["score_after"][1 - w] == 0
    assert m.carry == 0
    assert [e["dealer"] for e in log] == [0, 1, 0]


# -------------------------------------------------------------- R13.3: played out / closed

EC35_TRICKS = [("KD", "TD"), ("TC", "JC"), ("KH", "QD"), ("QH", "JD"), ("KS", "QS"), ("QC", "KC")]
EC35_SCRIPT = [
    "meld D", "KD", "TD", "draw", "TC", "JC", "draw", "KH", "QD", "draw", "QH", "JD", "draw",
    "KS", "QS", "draw", "QC", "KC",
]  # fmt: skip


@pytest.mark.parametrize("final", ["declare", "pass"])
def test_ec35_final_window_beats_a_higher_total(final: str) -> None:
    """R12.4/R13.3(b): after trick 12 A has 84, B (its winner) 66: B declaring wins 1;
    B passing lets A's higher total win 1."""
    n_final = ["AH", "TH", "AS", "TS", "AC", "9D"]
    d_final = ["9H", "9S", "JS", "9C", "AD", "JH"]
    h = deal(phase_a_deck(EC35_TRICKS, n_final, d_final, "JH"))
    play(h, *EC35_SCRIPT)
    assert h.to_move == N and h.view(N)["marriages"] == [{"seat": N, "suit": "D", "value": 20, "valid": True}]
    play(h, "AH", "9H", "TH", "*JH", "AS", "9S", "TS", "*JS", "AC", "*9C")
    assert (h.total(N), h.total(D)) == (84, 45)
    play(h, "9D", "*AD")
    assert pair(h.view(N), "trick_points") == (64, 56)
    assert (h.total(N), h.total(D)) == (84, 66)
    assert h.to_move == D and h.legal_actions() == ["declare", "pass"]
    play(h, final)
    if final == "declare":
        assert_result(h, D, 1, "declared", totals=(84, 66), tricks=(6, 6))
    else:
        assert_result(h, N, 1, "played_out", totals=(84, 66), tricks=(6, 6))


def test_ec36_successful_close_counts_the_final_total() -> None:
    """R13.1(a): O had 25 at the close but 35 at the declaration -> the closer wins 1."""
    tricks = [("KC", "AC"), ("TD", "9D"), ("JS", "AS")]
    n_final = ["AH", "TH", "KH", "QH", "9S", "JH"]
    d_final = ["KD", "TS", "KS", "QC", "JD", "9C"]
    h = deal(phase_a_deck(tricks, n_final, d_final, "9H", stock_rest=["TC", "JC", "AD", "QD", "QS"]))
    play(h, *tricks_script(tricks))
    v = h.view(N)
    assert h.to_move == N and v["stock_size"] == 6 and v["trick_number"] == 4
    assert pair(v, "tricks_won") == (1, 2) and pair(v, "trick_points") == (13, 25)
    play(h, "close", "meld H", "KH", "KD")
    assert h.total(N) == 61
    play(h, "9S")
    assert h.legal_actions() == ["play TS", "play KS"]
    play(h, "TS")
    assert h.total(D) == 35
    play(h, "KS")
    assert h.legal_actions() == ["play AH", "play TH", "play QH", "play JH"]
    play(h, "QH")
    assert h.total(N) == 68 and h.to_move == N
    play(h, "declare")
    assert_result(h, N, 1, "declared", totals=(68, 35))


EC37_N = ["AH", "TH", "AS", "TS", "JC", "JD"]
EC37_D = ["9H", "JH", "JS", "KS", "KC", "AD"]
EC37_PHASE_B = ["close", "AH", "9H", "TH", "*JH", "AS", "JS", "TS", "*KS"]


def test_ec37_failed_close_opponent_had_tricks() -> None:
    """R13.3(a): the closer ends with 60, nobody declares; O had 1 trick at the close -> 2."""
    tricks = [("9C", "AC"), ("9D", "TD")]
    h = deal(phase_a_deck(tricks, EC37_N, EC37_D, "QH"))
    play(h, *tricks_script(tricks))
    assert h.view(N)["stock_size"] == 8 and pair(h.view(N), "tricks_won") == (1, 1)
    play(h, *EC37_PHASE_B)
    assert h.total(N) == 60
    play(h, "JC", "*KC", "AD", "*JD")
    assert h.to_move == D and h.legal_actions() == ["declare", "pass"]
    play(h, "pass")
    assert_result(h, D, 2, "close_failed", totals=(60, 30), tricks=(5, 3))


EC38_N = ["AH", "TH", "AS", "TS", "QC", "JD"]
EC38_D = ["KH", "9H", "KS", "JS", "KC", "AD"]


@pytest.mark.parametrize(
    ("option", "expected"), [(None, 3), ("2or3_at_close", 3), ("2or3_at_end", 2), ("flat3", 3), ("flat2", 2)]
)
def test_ec38_failed_close_opponent_trickless_at_the_close(option: str | None, expected: int) -> None:
    """R13.3(a): N closes before trick 1, ends with 52; D won 2 tricks after the close -> 3
    (2or3_at_end: 2, flat3: 3)."""
    rules = Rules() if option is None else Rules(failed_close_points=option)
    h = deal(make_deck(EC38_N, EC38_D, "QH"), rules)
    assert h.view(N)["stock_size"] == 12 and "close" in h.legal_actions()
    play(h, "close", "AH", "KH", "TH", "*9H", "AS", "JS", "TS", "*KS")
    assert h.total(N) == 52
    play(h, "QC", "*KC", "AD", "*JD", "pass")
    assert_result(h, D, expected, "close_failed", totals=(52, 20), tricks=(4, 2))


def test_ec39_closer_opponent_goes_out_first() -> None:
    """R13.1(b): O (1 trick at the close) reaches 67 and declares -> 2."""
    tricks = [("9C", "AC"), ("QH", "AH")]
    n_final = ["9D", "AS", "JC", "TC", "QC", "KD"]
    d_final = ["AD", "TD", "JS", "KC", "KH", "9S"]
    h = deal(phase_a_deck(tricks, n_final, d_final, "JH"))
    play(h, "9C", "AC", "draw", "meld H", "QH", "AH", "draw")
    assert h.total(D) == 51 and pair(h.view(D), "tricks_won") == (1, 1)
    play(h, "@0", "close", "9D")
    assert h.legal_actions() == ["play AD", "play TD"]
    play(h, "TD", "JS", "*AS", "JC", "*KC")
    assert h.to_move == D and h.total(D) == 67
    play(h, "declare")
    assert_result(h, D, 2, "closer_opponent_out", totals=(27, 67))


@pytest.mark.parametrize(("option", "expected"), [(None, 3), ("2or3_at_close", 3), ("flat2", 2), ("flat3", 3)])
def test_ec39_closer_opponent_out_trickless_at_the_close(option: str | None, expected: int) -> None:
    """R13.1(b): O had no trick at the close -> 3 by default, 2 under flat2."""
    rules = Rules() if option is None else Rules(closer_opponent_out_points=option)
    n_final = ["TS", "TD", "KH", "QS", "JC", "9D"]
    d_final = ["AS", "AD", "AH", "TH", "KC", "QD"]
    h = deal(phase_a_deck([("AC", "9C")], n_final, d_final, "JH"), rules)
    play(h, "AC", "9C", "draw", "close", "TS", "*AS", "AD", "TD", "AH", "*KH", "TH")
    assert h.legal_actions() == ["play JC", "play 9D", "play QS"]
    play(h, "QS")
    assert h.to_move == D and h.total(D) == 70
    play(h, "declare")
    assert_result(h, D, expected, "closer_opponent_out", totals=(11, 70))


def test_ec40_no_bonus_after_a_close() -> None:
    """R9/R11.3: the closer wins the last trick 9C + JC: 62, not 72 -> O wins 2."""
    n_final = ["TD", "AS", "KS", "AH", "KH", "JC"]
    d_final = ["KD", "JS", "9S", "9H", "9D", "9C"]
    h = deal(phase_a_deck([("TS", "TH"), ("QD", "AD")], n_final, d_final, "QH"))
    play(h, "TS", "TH", "draw", "meld D", "QD", "AD", "draw", "close")
    play(h, "TD", "KD", "AS", "JS", "KS", "*9S", "AH", "*9H", "KH", "9D")
    assert (h.total(N), h.total(D)) == (60, 40)
    play(h, "JC", "*9C")
    assert (h.total(N), h.total(D)) == (62, 40)
    play(h, "@0", "pass")
    assert_result(h, D, 2, "close_failed", totals=(62, 40), tricks=(7, 1))


@pytest.mark.parametrize("closer_must_declare", [False, True])
def test_ec41_closed_played_out_closer_never_declared(closer_must_declare: bool) -> None:
    """R13.3(a): closer 70, O 50, nobody declared -> the closer wins 1; with
    closer_must_declare the close has failed (O had no trick at the close -> 3)."""
    rules = Rules(closer_must_declare=closer_must_declare)
    h = deal(make_deck(["KH", "QH", "AC", "TD", "TS", "KD"], ["9S", "JS", "TC", "AD", "AS", "KC"], "9H"), rules)
    play(h, "close", "meld H", "KH")
    assert len(h.legal_actions()) == 6
    play(h, "9S", "QH", "JS", "AC", "TC")
    assert h.total(N) == 70
    play(h, "TD", "*AD", "AS", "*TS", "KC", "*KD", "@1", "pass")
    if closer_must_declare:
        assert_result(h, D, 3, "close_failed", totals=(70, 50), tricks=(3, 3))
    else:
        assert_result(h, N, 1, "played_out", totals=(70, 50), tricks=(3, 3))


def test_ec42_closer_false_declaration() -> None:
    """R13.2(a): the closer declares at 64: O (1 trick at the close) wins 2; if O had no
    trick at the close (even with one now) -> 3."""
    tricks = [("9C", "AC"), ("KD", "TD")]
    h = deal(phase_a_deck(tricks, EC37_N, EC37_D, "QH"))
    play(h, *tricks_script(tricks), *EC37_PHASE_B)
    assert h.to_move == N and h.total(N) == 64
    play(h, "declare")
    assert_result(h, D, 2, "false_declaration", totals=(64, 11))
    # N closes before trick 1, D then wins a trick, N declares at 27
    h = deal(make_deck(EC38_N, EC38_D, "QH"))
    play(h, "close", "AH", "KH", "QC", "*KC", "JS")
    assert h.legal_actions() == ["play AS", "play TS"]
    play(h, "TS")
    assert h.to_move == N and h.total(N) == 27 and h.view(N)["tricks_won"][D] == 1
    play(h, "declare")
    assert_result(h, D, 3, "false_declaration", totals=(27, 7))


def test_ec43_non_closer_false_declaration_in_a_closed_hand() -> None:
    """R13.2(b): O declares at 60 in a closed hand: the closer wins 2, or 3 if the closer
    has no trick at that moment."""
    h = deal(make_deck(["AH", "TS", "TD", "9C", "KD", "QS"], ["9H", "JH", "AS", "AD", "TC", "KC"], "QH"))
    play(h, "close", "AH", "9H", "TS", "*AS", "AD")
    assert h.legal_actions() == ["play TD", "play KD"]
    play(h, "TD", "TC", "*9C", "KC")
    assert h.legal_actions() == ["play KD", "play QS"]
    play(h, "KD")
    assert h.to_move == D and h.total(D) == 60
    play(h, "declare")
    assert_result(h, N, 2, "false_declaration", totals=(11, 60))
    # N closed before trick 1 and has lost every trick
    h = deal(make_deck(["TS", "TD", "9C", "KD", "QS", "JD"], ["AS", "AD", "TC", "KC", "AH", "TH"], "9H"))
    play(h, "close", "TS", "*AS", "AD", "TD", "TC", "*9C", "KC", "KD")
    assert h.to_move == D and h.total(D) == 60 and h.view(D)["tricks_won"][N] == 0
    play(h, "declare")
    assert_result(h, N, 3, "false_declaration", totals=(0, 60), tricks=(0, 4))


def _play_out_quietly(h: Hand) -> None:
    """Finish a hand deterministically: the first play action each time, pass at the end."""
    while not h.is_over:
        legal = h.legal_actions()
        action = "pass" if legal == ["declare", "pass"] else next(a for a in legal if a.startswith("play "))
        h.apply(action)


def test_ec44_close_before_the_draw() -> None:
    """R11.2(b)/R11.4/R7.3: the winner of trick 2 closes before drawing (stock 10): 5 cards
    each, 7 tricks in all, the 10 stock cards (up-card included) are dead."""
    tricks = [("AC", "9C"), ("TC", "JC")]
    deck = phase_a_deck(tricks, [], [], "QH", draws=1)
    h = deal(deck)
    play(h, *tricks_script(tricks, last_draw=False))
    assert h.to_move == N and h.view(N)["stock_size"] == 10
    assert h.legal_actions() == ["close", "draw"]
    play(h, "close")
    v = h.view(D)
    assert v["closed"] and v["closer"] == N and v["stock_size"] == 0 and v["up_card"] is None
    assert len(hand_of(h, N)) == 5 and len(hand_of(h, D)) == 5 and h.to_move == N
    dead = [deck[12]] + deck[15:]
    assert len(dead) == 10 and not set(dead) & set(hand_of(h, N) + hand_of(h, D))
    _play_out_quietly(h)
    v = h.view(N)
    assert len(v["tricks"]) == 7
    played = [c for t in v["tricks"] for c in (t["lead"], t["follow"])]
    assert not set(played) & set(dead)
    assert sum(v["trick_points"]) == 120 - points(dead)
    assert h.result is not None and sum(h.result.tricks) == 7


def test_ec45_close_legality_matrix() -> None:
    """R11.1/R11.2/R11.7: who may close, and when."""
    n6 = len(tricks_script(EC10_TRICKS))
    # N before trick 1 (stock 12): yes; D at that moment is not on lead; follower: no
    h = _ec10_hand(0)
    assert h.to_move == N and h.view(N)["stock_size"] == 12 and "close" in h.legal_actions()
    assert h.view(D)["legal_actions"] == []
    play(h, "AC")
    assert h.to_move == D and "close" not in h.legal_actions()
    assert_illegal(h, "close")
    # the winner of trick 5 in PRE_DRAW (stock 4): yes, then 5 cards each; no second close
    h = _ec10_hand(n6 - 3)
    assert h.to_move == N and h.view(N)["stock_size"] == 4 and h.legal_actions() == ["close", "draw"]
    play(h, "close")
    assert len(hand_of(h, N)) == 5 and len(hand_of(h, D)) == 5
    assert h.to_move == N and "close" not in h.legal_actions()
    assert_illegal(h, "close")
    # the winner of trick 5 after the draw, leading trick 6 (stock 2): yes
    h = _ec10_hand(n6 - 2)
    assert h.view(N)["stock_size"] == 2 and "close" in h.legal_actions()
    play(h, "close")
    assert h.view(D)["closed"] and len(hand_of(h, N)) == 6
    # the winner of trick 6: no PRE_DRAW (the draw is automatic), leading trick 7: no close
    h = _ec10_hand()
    assert h.to_move == D and h.view(D)["stock_size"] == 0 and "close" not in h.legal_actions()
    assert_illegal(h, "close")
    # allow_close_before_final_draw=true: the winner of trick 6 may close before the draw
    h = _ec10_hand(rules=Rules(allow_close_before_final_draw=True))
    assert h.to_move == D and h.view(D)["stock_size"] == 2
    assert h.legal_actions() == ["close", "draw"]
    play(h, "close")
    assert len(hand_of(h, D)) == 5 and len(hand_of(h, N)) == 5 and h.view(N)["closed"]


@pytest.mark.parametrize("on_closing_lead", [True, False])
def test_ec46_marriage_at_the_closing_lead(on_closing_lead: bool) -> None:
    """R11.6: after closing, the closer may announce KD QD (20) on that lead; not with
    marriage_on_closing_lead=false."""
    rules = Rules(marriage_on_closing_lead=on_closing_lead)
    h = deal(phase_a_deck([("AC", "9C")], ["KD", "QD"], [], "QH"), rules)
    play(h, "AC", "9C", "draw")
    assert "meld D" in h.legal_actions()
    play(h, "close")
    if not on_closing_lead:
        assert "meld D" not in h.legal_actions()
        assert_illegal(h, "meld D")
        return
    assert "meld D" in h.legal_actions()
    play(h, "meld D", "KD")
    assert h.view(D)["marriages"] == [{"seat": N, "suit": "D", "value": 20, "valid": True}]
    assert h.total(N) == 31


def test_ec47_match_end() -> None:
    """R2.4: P at 6 wins a 1-point hand -> 7, the match is over; with carry 1 pending, O at
    5 wins a 1-point hand -> 7."""
    m, log = run_plan(Rules(first_dealer=0), [win(0, 3), win(1, 3), win(0, 3), win(1, 2), win(0, 1)])
    assert [e["score_after"] for e in log] == [(3, 0), (3, 3), (6, 3), (6, 5), (7, 5)]
    assert m.is_over and m.winner == 0 and tuple(m.score) == (7, 5) and len(m.results) == 5
    m, log = run_plan(Rules(first_dealer=0), [win(0, 3), win(1, 3), win(1, 2), tie(), win(1, 1)])
    assert [e["score_after"] for e in log] == [(3, 0), (3, 3), (3, 5), (3, 5), (3, 7)]
    assert log[4]["carry"] == 1
    assert m.is_over and m.winner == 1 and tuple(m.score) == (3, 7)


def test_ec48_dealer_alternation() -> None:
    """R2.3: dealers P0, P1, P0, P1 whatever the winners (the dealer winning, a tie)."""
    m, log = run_plan(Rules(first_dealer=0), [win(0, 1), tie(), win(1, 2), win(0, 1)])
    assert [e["dealer"] for e in log] == [0, 1, 0, 1]
    assert [e["to_move"] for e in log] == [1, 0, 1, 0]  # the non-dealer leads trick 1
    assert m.hand_index == 4 and m.hand.dealer == 0
    assert m.view(0)["match"]["dealer"] == 0


def test_ec49_last_draw_after_an_exchange() -> None:
    """R7.2: P exchanged 9H for the up-card QH at trick 4; the loser of trick 6 gets 9H."""
    tricks = [("AC", "9C"), ("TC", "JC"), ("AD", "9D"), ("TD", "JD"), ("AS", "9S"), ("TS", "JS")]
    n_final = ["9H", "KC", "KD", "AH", "TH", "KS"]
    d_final = ["QC", "QD", "KH", "JH", "QS", "QH"]
    h = deal(phase_a_deck(tricks, n_final, d_final, "QH"))
    play(h, *tricks_script(tricks[:3]))
    assert h.view(N)["trick_number"] == 4 and "9H" in hand_of(h, N)
    play(h, "exchange")
    assert h.view(D)["up_card"] == "9H" and "QH" in h.view(D)["opponent_known"]
    play(h, "TD", "JD", "draw", "AS", "9S", "draw", "TS", "JS")
    assert hand_of(h, N) == canon(["QH", "KC", "KD", "AH", "TH", "KS"])
    assert hand_of(h, D) == canon(["QC", "QD", "KH", "JH", "QS", "9H"])
    assert "9H" in h.view(N)["opponent_known"] and "QH" in h.view(D)["opponent_known"]
    assert h.view(N)["stock_size"] == 0


# ------------------------------------------------------------------------ R16: fuzzing


def _check_decision(h: Hand, deck: list[str], profile: str) -> None:
    """R5.1/R16 invariants at a decision point."""
    seat = h.to_move
    assert seat is not None
    legal = h.legal_actions()
    assert len(legal) >= 2, legal
    v0, v1 = h.view(0), h.view(1)
    assert v0["legal_actions"] == legal if seat == 0 else v0["legal_actions"] == []
    assert v1["legal_actions"] == legal if seat == 1 else v1["legal_actions"] == []
    if profile == "santase":
        assert "declare" not in legal
    h0, h1 = v0["hand"], v1["hand"]
    played = [c for t in v0["tricks"] for c in (t["lead"], t["follow"])]
    current = [v0["lead"]] if v0["lead"] is not None else []
    seen = h0 + h1 + played + current
    assert len(set(seen)) == len(seen) and set(seen) <= set(deck)
    t = len(v0["tricks"])
    if not v0["closed"]:
        assert len(seen) + v0["stock_size"] == 24
        if v0["stock_size"]:
            expected = 14 - 2 * t if "draw" in legal else 12 - 2 * t
            assert v0["stock_size"] == expected
            assert v0["up_card"] is not None and v0["up_card"] not in seen
    else:
        assert v0["stock_size"] == 0 and len(seen) < 24
    if v0["lead"] is None:
        assert len(h0) == len(h1)
    assert sum(v0["tricks_won"]) == t
    assert sum(v0["trick_points"]) == points(played)
    suits = [m["suit"] for m in v0["marriages"]]
    assert len(suits) == len(set(suits))
    for m in v0["marriages"]:
        assert m["value"] == (40 if m["suit"] == v0["trump"] else 20)
    assert [h.total(0), h.total(1)] == list(v0["totals"]) == list(v1["totals"])


def _check_end(h: Hand, never_closed: bool) -> None:
    """R13/R16 invariants of a finished hand."""
    res = h.result
    assert res is not None and h.to_move is None and h.legal_actions() == []
    assert res.game_points in (0, 1, 2, 3)
    assert (res.winner is None) == (res.game_points == 0) == (str(res.reason) == "tie")
    assert tuple(res.totals) == (h.total(0), h.total(1))
    v = h.view(0)
    if str(res.reason) in ("played_out", "tie") and never_closed:
        assert len(v["tricks"]) == 12 and sum(v["trick_points"]) == 120
        valid = sum(m["value"] for m in v["marriages"] if m["valid"])
        assert sum(res.totals) == 130 + valid
    if str(res.reason) == "tie":
        assert res.totals[0] == res.totals[1]
    with pytest.raises(IllegalAction):
        h.apply("pass")


@pytest.mark.parametrize("profile", ["default", "pagat", "santase"])
def test_ec50_fuzz_invariants(profile: str) -> None:
    """R16: random legal play over 200 hands per named profile keeps the invariants."""
    rules = Rules.profile(profile)
    rng = random.Random(f"ec50:{profile}")
    reasons: set[str] = set()
    for i in range(200):
        deck = list(ALL_CARDS)
        rng.shuffle(deck)
        h = Hand.deal(deck, dealer=i % 2, rules=rules)
        wild = rng.random() < 0.3  # some hands choose uniformly among all legal actions
        never_closed = True
        while not h.is_over:
            _check_decision(h, deck, profile)
            legal = h.legal_actions()
            seat = h.to_move
            assert seat is not None
            if wild:
                a = rng.choice(legal)
            else:
                calm = [x for x in legal if x not in ("declare", "close")] or legal
                a = rng.choice(calm)
                if "declare" in legal and h.total(seat) >= 66 and rng.random() < 0.5:
                    a = "declare"
            never_closed = never_closed and a != "close"
            h.apply(a)
            never_closed = never_closed and not h.view(0)["closed"]
        _check_end(h, never_closed)
        assert h.result is not None
        reasons.add(str(h.result.reason))
    # auto_declare (santase) leaves no false declarations and few played-out hands
    expected = {"declared"} if profile == "santase" else {"declared", "played_out", "false_declaration"}
    assert expected <= reasons
