"""Deck builders and scripted-play helpers for the engine edge-case tests.

Pure helpers (no engine import): a deck is a list of 24 card strings in deal order
c0..c23 (docs/rules.md R3.2). N (the non-dealer) receives c0 c1 c2 c6 c7 c8, D receives
c3 c4 c5 c9 c10 c11, c12 is the up-card and the stock is drawn c13 first ... c23, then
the up-card last.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

RANKS = "ATKQJ9"
SUITS = "CDHS"
VALUES = {"A": 11, "T": 10, "K": 4, "Q": 3, "J": 2, "9": 0}
ALL_CARDS: list[str] = [r + s for s in SUITS for r in RANKS]

N_SLOTS = (0, 1, 2, 6, 7, 8)
D_SLOTS = (3, 4, 5, 9, 10, 11)
UP_SLOT = 12
ROLE_N, ROLE_D = 0, 1  # roles inside the deck builders (not seats)


def value(card: str) -> int:
    """Card points of one card (R1.3)."""
    return VALUES[card[0]]


def points(cards: Iterable[str]) -> int:
    """Sum of card points."""
    return sum(value(c) for c in cards)


def canon(cards: Iterable[str]) -> list[str]:
    """Cards in canonical order: suits C D H S, ranks A T K Q J 9."""
    return sorted(cards, key=lambda c: (SUITS.index(c[1]), RANKS.index(c[0])))


def plays(cards: Iterable[str]) -> list[str]:
    """`play` actions for the cards, in canonical order."""
    return ["play " + c for c in canon(cards)]


def trick_winner(lead: str, follow: str, trump: str) -> int:
    """0 if the leader wins the trick, 1 if the follower does (R6.4)."""
    if lead[1] == follow[1]:
        return 0 if RANKS.index(lead[0]) < RANKS.index(follow[0]) else 1
    return 1 if follow[1] == trump else 0


def _check_cards(cards: Iterable[str]) -> None:
    seen: set[str] = set()
    for c in cards:
        if c not in ALL_CARDS:
            raise ValueError(f"not a card: {c!r}")
        if c in seen:
            raise ValueError(f"card used twice: {c}")
        seen.add(c)


def _fill(slots: dict[int, str]) -> list[str]:
    """Complete a partial slot->card map with the unused cards in canonical order."""
    _check_cards(slots.values())
    spare = [c for c in ALL_CARDS if c not in set(slots.values())]
    deck = [slots.get(i) or spare.pop(0) for i in range(24)]
    _check_cards(deck)
    assert len(deck) == 24
    return deck


def make_deck(
    n_cards: Sequence[str],
    d_cards: Sequence[str],
    up_card: str,
    stock: Sequence[str] = (),
) -> list[str]:
    """Deck giving N `n_cards` and D `d_cards` (up to 6 each), the up-card, and the
    stock in draw order (c13 first; up to 11 cards). Unspecified slots get the unused
    cards in canonical order."""
    if len(n_cards) > 6 or len(d_cards) > 6 or len(stock) > 11:
        raise ValueError("too many cards")
    slots: dict[int, str] = {UP_SLOT: up_card}
    slots.update({N_SLOTS[i]: c for i, c in enumerate(n_cards)})
    slots.update({D_SLOTS[i]: c for i, c in enumerate(d_cards)})
    slots.update({13 + i: c for i, c in enumerate(stock)})
    if len(slots) != 1 + len(n_cards) + len(d_cards) + len(stock):
        raise ValueError("duplicate slot")
    return _fill(slots)


def phase_a_deck(
    tricks: Sequence[tuple[str, str]],
    n_final: Sequence[str],
    d_final: Sequence[str],
    up: str,
    draws: int | None = None,
    stock_rest: Sequence[str] = (),
) -> list[str]:
    """Deck for a scripted Phase-A opening.

    `tricks` are the first k (<= 6) tricks as (leader's card, follower's card); N leads
    trick 1 and the winner of each trick (R6.4, computed here) leads the next. Every card a
    player plays in these tricks is in its initial hand. After trick t (t <= `draws`,
    default k) the winner draws first, then the loser (R7.1). `n_final`/`d_final` are the
    hands after the k tricks and their draws (6 - k + draws cards): the first 6 - k are
    kept from the deal, the rest are drawn in that order. If draws == 6 the loser of trick
    6 must end with the up-card. Short final lists are completed with spare cards (which
    are then drawn last). `stock_rest` lists the undrawn stock cards (next to be drawn
    first); the remaining stock is filled with spare cards.
    """
    k = len(tricks)
    if draws is None:
        draws = k
    if not 0 <= draws <= k <= 6:
        raise ValueError("need 0 <= draws <= len(tricks) <= 6")
    trump = up[1]
    played: dict[int, list[str]] = {ROLE_N: [], ROLE_D: []}
    winners: list[int] = []
    leader = ROLE_N
    for lead, follow in tricks:
        follower = 1 - leader
        played[leader].append(lead)
        played[follower].append(follow)
        w = leader if trick_winner(lead, follow, trump) == 0 else follower
        winners.append(w)
        leader = w
    size = 6 - k + draws
    finals = {ROLE_N: list(n_final), ROLE_D: list(d_final)}
    used = [*played[ROLE_N], *played[ROLE_D], *finals[ROLE_N], *finals[ROLE_D], *stock_rest]
    _check_cards(used)
    if up in used and draws != 6:
        raise ValueError(f"the up-card {up} is only drawn after trick 6")
    if up not in used:
        used.append(up)
    spare = [c for c in ALL_CARDS if c not in set(used)]
    for role in (ROLE_N, ROLE_D):
        if len(finals[role]) > size:
            raise ValueError(f"final hand of role {role} has more than {size} cards")
        while len(finals[role]) < size:
            finals[role].append(spare.pop(0))
    kept = {r: finals[r][: 6 - k] for r in finals}
    drawn = {r: finals[r][6 - k :] for r in finals}
    stock: list[str | None] = [None] * 12  # index 11 is the up-card slot c12
    for t in range(draws):
        w = winners[t]
        stock[2 * t] = drawn[w][t]
        stock[2 * t + 1] = drawn[1 - w][t]
    if stock[11] is not None and stock[11] != up:
        raise ValueError(f"the loser of trick 6 draws the up-card {up}, not {stock[11]}")
    rest = list(stock_rest) + spare
    for i in range(2 * draws, 11):
        stock[i] = rest.pop(0)
    slots: dict[int, str] = {UP_SLOT: up}
    for role, slot_ids in ((ROLE_N, N_SLOTS), (ROLE_D, D_SLOTS)):
        for slot, card in zip(slot_ids, played[role] + kept[role], strict=True):
            slots[slot] = card
    for i in range(11):
        drawn_card = stock[i]
        assert drawn_card is not None
        slots[13 + i] = drawn_card
    deck = _fill(slots)
    assert not set(spare) - set(deck)
    return deck


def tricks_script(tricks: Sequence[tuple[str, str]], last_draw: bool = True) -> list[str]:
    """Tokens playing Phase-A tricks: lead, follow, then `draw` in the PRE_DRAW window
    after tricks 1-5 (default options, R5/R11.2 b). With last_draw=False the script stops
    in the PRE_DRAW window of its last trick."""
    out: list[str] = []
    for i, (lead, follow) in enumerate(tricks, start=1):
        out += [lead, follow]
        if i <= 5 and (last_draw or i < len(tricks)):
            out.append("draw")
    return out


def _action(token: str) -> str:
    if len(token) == 2 and token in ALL_CARDS:
        return "play " + token
    return token


def play(hand: Any, *tokens: str) -> None:
    """Apply scripted actions. A bare card `XY` means `play XY`; `*XY` asserts that XY was
    just played by the engine itself (a forced single-card follow, R5.1); `@s` asserts that
    seat s is to move. Every other token must be among the legal actions of `to_move`."""
    for tok in tokens:
        if tok.startswith("*"):
            card = tok[1:]
            last = hand.view(0)["tricks"][-1]
            assert card in (last["lead"], last["follow"]), f"{card} was not auto-played: {last}"
            continue
        if tok.startswith("@"):
            assert hand.to_move == int(tok[1:]), f"expected seat {tok[1:]} to move, got {hand.to_move}"
            continue
        action = _action(tok)
        assert hand.to_move is not None, f"hand is over, cannot apply {action!r}"
        legal = hand.legal_actions()
        assert action in legal, f"{action!r} not legal for seat {hand.to_move}: {legal}"
        hand.apply(action)
