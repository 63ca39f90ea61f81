"""Tactical positions for the ladder bots, built from explicit decks and scripted actions."""

from __future__ import annotations

from typing import Any

from arena.engine import Hand

from ..engine.decks import make_deck, phase_a_deck, play, tricks_script


def hand_after(deck: list[str], *tokens: str, dealer: int = 0) -> Hand:
    """Deal ``deck`` (N = seat 1 when dealer is 0) and play the scripted tokens."""
    hand = Hand.deal(deck, dealer)
    play(hand, *tokens)
    return hand


def to_move_view(hand: Hand) -> dict[str, Any]:
    """The view of the seat to move."""
    assert hand.to_move is not None
    return hand.view(hand.to_move)


def exchange_position() -> Hand:
    """N won trick 1 and leads trick 2 holding the trump nine (up-card AH)."""
    deck = phase_a_deck([("AC", "9C")], ["9H", "JC", "QD", "9S", "JS", "9D"], ["TD", "AD", "JD", "TS", "QS", "KS"],
                        up="AH")
    return hand_after(deck, *tricks_script([("AC", "9C")]))


def marriages_position() -> Hand:
    """N leads trick 1 holding the trump marriage (40) and the spade marriage (20)."""
    deck = make_deck(["KH", "QH", "KS", "QS", "AC", "9D"], ["TC", "JC", "TD", "JD", "AS", "9S"], "JH")
    return hand_after(deck)


def meld_and_go_out_position() -> Hand:
    """N has won 52 points in three tricks and holds the club marriage: 20 more is 72."""
    tricks = [("AC", "TC"), ("AD", "TD"), ("TS", "9S")]
    deck = phase_a_deck(tricks, ["KC", "QC", "9D", "JD", "QS", "JS"], [], up="JH")
    return hand_after(deck, *tricks_script(tricks))


def safe_close_position(points: bool = True) -> Hand:
    """N leads trick 3 holding AH TH KH (trumps, up-card JH: the opponent has at most the
    other two trumps) and AS TS; with ``points`` N has already won 42 in two tricks, so
    closing reaches 66 for sure (without them it does not)."""
    tricks = [("AC", "TC"), ("AD", "TD")] if points else [("JC", "9C"), ("JD", "9D")]
    deck = phase_a_deck(tricks, ["AH", "TH", "KH", "AS", "TS", "9C" if points else "QC"], [], up="JH")
    return hand_after(deck, *tricks_script(tricks))


def false_declaration_position() -> Hand:
    """N has 63 after three tricks, no marriage in hand, and leads trick 4: declaring loses."""
    tricks = [("AC", "TC"), ("AD", "TD"), ("AS", "TS")]
    deck = phase_a_deck(tricks, ["9C", "JC", "9D", "JD", "9S", "JS"], [], up="QH")
    return hand_after(deck, *tricks_script(tricks))


# Seat 0 leads trick 8 (stock exhausted); only "play KH" wins (1 game point), every other
# lead loses. Found by search from a seeded deal; the expert's heuristic leads AD and loses.
FORCED_WIN_DECK = ["KC", "QC", "9S", "JH", "AC", "JD", "KD", "9D", "9H", "QD", "TD", "TH", "QH", "JC", "9C", "AH",
                   "KH", "TS", "TC", "QS", "KS", "JS", "AD", "AS"]
FORCED_WIN_ACTIONS = ["meld C", "play QC", "play AC", "draw", "play JD", "play KD", "draw", "exchange", "play 9S",
                      "play JC", "draw", "play 9D", "play QD", "draw", "play QS", "play KS", "draw", "play 9C",
                      "play TC", "play TD", "play 9H", "play JS"]


def forced_win_position() -> Hand:
    """The endgame above, from its explicit deck and actions."""
    return hand_after(FORCED_WIN_DECK, *FORCED_WIN_ACTIONS)
