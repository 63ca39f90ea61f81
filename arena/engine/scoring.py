"""How a hand ends and its game points (docs/rules.md R13), a seat's total (R9) and a
marriage's value (R10.1).

Each formula is written once, here, on plain ints: the rules core (``Core``) scores with
these functions, and so does search that keeps its own state on bitmasks
(``botkit/endgame.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

from .result import Reason
from .rules import Rules


def seat_total(trick_points: int, tricks: int, marriage_points: int) -> int:
    """A seat's R9 total before any last-trick bonus: its trick points, plus its marriages
    once it has won a trick."""
    return trick_points + marriage_points if tricks else trick_points


def game_points_against(rules: Rules, total: int, tricks: int, marriage_points: int) -> int:
    """G(loser): 3 if trickless, 2 if under 33, else 1 (R13.0), from the loser's R9 ``total``,
    its ``tricks`` won and its ``marriage_points`` (left out of the 33 unless
    ``schneider_counts_marriages``)."""
    if not tricks:
        return 3
    if not rules.schneider_counts_marriages:
        total -= marriage_points
    return 2 if total < 33 else 1


def closer_opponent_out_points(rules: Rules, opp_tricks_at_close: int) -> int:
    """What the closer's opponent wins by going out first in a closed hand (R13.1 b), given the
    tricks it had won when the stock was closed."""
    option = rules.closer_opponent_out_points
    if option == "2or3_at_close":
        return 3 if opp_tricks_at_close == 0 else 2
    return 2 if option == "flat2" else 3


def failed_close_points(rules: Rules, opp_tricks_at_close: int, opp_tricks: int) -> int:
    """What the closer's opponent wins when the close fails (R13.2 a, R13.3 a), given its tricks at the
    close and now."""
    option = rules.failed_close_points
    if option == "2or3_at_close":
        return 3 if opp_tricks_at_close == 0 else 2
    if option == "2or3_at_end":
        return 3 if opp_tricks == 0 else 2
    return 3 if option == "flat3" else 2


def false_declaration_points(rules: Rules, opponent_tricks: int) -> int:
    """What the opponent of a false declarer (not the closer) wins (R13.2 b), given its tricks."""
    if rules.false_declaration_points == "flat2":
        return 2
    return 3 if opponent_tricks == 0 else 2


def marriage_value(suit: int, trump: int) -> int:
    """What a marriage of ``suit`` is worth: 40 in trumps, else 20 (R10.1)."""
    return 40 if suit == trump else 20


Outcome = tuple[int | None, int, Reason]
"""A finished hand's (winner or None for a tie, game points, reason)."""


def declaration_outcome(rules: Rules, seat: int, totals: Sequence[int], tricks: Sequence[int],
                        marriage_points: Sequence[int], closer: int, opp_tricks_at_close: int) -> Outcome:
    """How the hand ends when ``seat`` declares (R13.1, R13.2), from the seats' R9 ``totals``,
    tricks and marriage points, the ``closer`` (-1 when the stock was never closed) and the
    tricks its opponent had at the close."""
    opponent = 1 - seat
    if totals[seat] >= 66:
        if closer < 0 or seat == closer:
            points = game_points_against(rules, totals[opponent], tricks[opponent], marriage_points[opponent])
            return seat, points, Reason.DECLARED
        return seat, closer_opponent_out_points(rules, opp_tricks_at_close), Reason.CLOSER_OPPONENT_OUT
    if seat == closer:
        return opponent, failed_close_points(rules, opp_tricks_at_close, tricks[opponent]), Reason.FALSE_DECLARATION
    return opponent, false_declaration_points(rules, tricks[opponent]), Reason.FALSE_DECLARATION


def played_out_outcome(rules: Rules, totals: Sequence[int], tricks: Sequence[int], marriage_points: Sequence[int],
                       closer: int, opp_tricks_at_close: int) -> Outcome:
    """How the hand ends when all cards are played and nobody declares (R13.3); the arguments
    are those of ``declaration_outcome``."""
    if closer >= 0:
        opponent = 1 - closer
        if totals[closer] >= 66 and not rules.closer_must_declare:
            points = game_points_against(rules, totals[opponent], tricks[opponent], marriage_points[opponent])
            return closer, points, Reason.PLAYED_OUT
        return opponent, failed_close_points(rules, opp_tricks_at_close, tricks[opponent]), Reason.CLOSE_FAILED
    t0, t1 = totals[0], totals[1]
    if t0 == t1:
        return None, 0, Reason.TIE
    winner = 0 if t0 > t1 else 1
    loser = 1 - winner
    return winner, game_points_against(rules, totals[loser], tricks[loser], marriage_points[loser]), Reason.PLAYED_OUT


__all__ = [
    "Outcome", "closer_opponent_out_points", "declaration_outcome", "played_out_outcome", "failed_close_points", "false_declaration_points", "game_points_against",
    "marriage_value", "seat_total",
]
