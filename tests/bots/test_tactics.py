"""Tactical positions each ladder bot must solve (explicit decks, scripted actions)."""

from __future__ import annotations

import pytest

from arena.engine import Hand, Rules

from ..engine.decks import make_deck
from . import positions as pos
from .conftest import LADDER, SEARCH, MakeBot

pytestmark = pytest.mark.unit

ALL = list(LADDER)


def decide(make_bot: MakeBot, name: str, hand: Hand) -> str:
    view = pos.to_move_view(hand)
    action = make_bot(name, view["seat"]).act(view, view["legal_actions"])
    assert action in view["legal_actions"]
    return action


@pytest.mark.parametrize("name", ["greedy", "expert", "expert_ab", "ismcts"])
def test_exchanges_the_trump_nine(make_bot: MakeBot, name: str) -> None:
    hand = pos.exchange_position()
    assert "exchange" in hand.legal_actions()
    assert decide(make_bot, name, hand) == "exchange"


@pytest.mark.parametrize("name", ["greedy", "expert", "expert_ab"])
def test_announces_the_trump_marriage_first_and_never_declares_it_pending(make_bot: MakeBot, name: str) -> None:
    hand = pos.marriages_position()
    assert decide(make_bot, name, hand) == "meld H"
    hand.apply("meld H")
    assert "declare" in hand.legal_actions()  # 40 pending, no trick yet: total 0
    assert decide(make_bot, name, hand) in ("play KH", "play QH")


@pytest.mark.parametrize("name", ["expert", "expert_ab", "pimc", "ismcts"])
def test_melds_and_goes_out(make_bot: MakeBot, name: str) -> None:
    hand = pos.meld_and_go_out_position()
    assert decide(make_bot, name, hand) == "meld C"
    hand.apply("meld C")
    assert decide(make_bot, name, hand) == "declare"
    hand.apply("declare")
    assert hand.result is not None and hand.result.winner == hand.dealer ^ 1 and hand.result.totals[1] == 72


@pytest.mark.parametrize("name", ["expert", "expert_ab", "pimc", "ismcts"])
def test_takes_a_safe_close(make_bot: MakeBot, name: str) -> None:
    assert decide(make_bot, name, pos.safe_close_position()) == "close"


def test_greedy_never_closes_and_expert_closes_only_when_safe(make_bot: MakeBot) -> None:
    assert decide(make_bot, "greedy", pos.safe_close_position()) != "close"
    assert decide(make_bot, "expert", pos.safe_close_position(points=False)) != "close"


@pytest.mark.parametrize("name", ALL)
def test_never_declares_under_66(make_bot: MakeBot, name: str) -> None:
    hand = pos.false_declaration_position()
    view = pos.to_move_view(hand)
    assert "declare" in view["legal_actions"] and view["totals"][view["seat"]] == 63
    assert decide(make_bot, name, hand) != "declare"


@pytest.mark.parametrize("name", SEARCH)
def test_alpha_beta_finds_the_forced_win(make_bot: MakeBot, name: str) -> None:
    hand = pos.forced_win_position()
    view = pos.to_move_view(hand)
    assert view["stock_size"] == 0 and not view["closed"]
    assert decide(make_bot, name, hand) == "play KH"
    hand.apply("play KH")
    seat = view["seat"]
    while not hand.is_over:  # and it converts the win against any defence it then faces
        mover = hand.to_move
        assert mover is not None
        if mover == seat:
            hand.apply(decide(make_bot, name, hand))
        else:
            hand.apply(hand.legal_actions()[-1])
    assert hand.result is not None and hand.result.winner == seat


def test_the_forced_win_is_not_the_expert_heuristic(make_bot: MakeBot) -> None:
    assert decide(make_bot, "expert", pos.forced_win_position()) != "play KH"


@pytest.mark.parametrize("name", SEARCH)
def test_search_is_deterministic_for_a_seed(make_bot: MakeBot, name: str) -> None:
    hand = pos.safe_close_position(points=False)
    hand.apply("play QC")
    view = hand.view(0)  # the dealer follows in Phase A: every card is legal
    first = [make_bot(name, 0).act(view, view["legal_actions"]) for _ in range(2)]
    assert first[0] == first[1]


@pytest.mark.parametrize("name", ["pimc", "ismcts"])
def test_search_stops_at_the_safety_net_of_a_tiny_time_limit(name: str) -> None:
    """With a huge budget and a 1 ms limit the search still answers (it would run for hours
    without the safety net; the test timeout catches that)."""
    hand = pos.safe_close_position(points=False)
    view = pos.to_move_view(hand)
    bot = LADDER[name]("g", view["seat"], rules=Rules(), budget=10**7)
    bot.time_limit_ms = 1
    assert bot.effective_budget() == 10**4
    assert bot.act(view, view["legal_actions"]) in view["legal_actions"]


@pytest.mark.parametrize("name", ALL)
def test_decisions_depend_on_the_view_only(make_bot: MakeBot, name: str) -> None:
    """Two deals that differ only in cards N cannot see give N the same view and, with the
    same seed, the same decision: nothing hidden reaches the bot."""
    n_cards, up = ["AC", "TC", "KH", "QS", "9D", "JS"], "JH"
    a = make_deck(n_cards, ["TD", "AD", "QD", "KS", "AS", "9C"], up)
    b = make_deck(n_cards, ["9C", "AS", "9S", "KC", "QC", "QH"], up)
    assert a[13:] != b[13:]
    views = [pos.to_move_view(pos.hand_after(deck)) for deck in (a, b)]
    assert views[0] == views[1]
    first, second = (make_bot(name, 1).act(v, v["legal_actions"]) for v in views)
    assert first == second
