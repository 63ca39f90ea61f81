"""The referee's clock and fault policy, driven in-process (no sockets) by a scripted peer."""

from __future__ import annotations

import random

import pytest

from arena.clock import MatchClock, TimeControl
from arena.engine import Match, Rules
from arena.engine.records import Fault, FaultKind
from arena.faults import FaultPolicy
from arena.referee import FaultNote, Referee

pytestmark = pytest.mark.unit

NAMES = ("alpha", "beta")


def random_answer(legal: list[str], view: dict, rng: random.Random) -> str:
    if "declare" in legal:
        if view["totals"][view["seat"]] >= 66:
            return "declare"
        legal = [a for a in legal if a != "declare"]
    return rng.choice(legal)


def play(referee: Referee, seed: int = 0, elapsed_s: float = 0.001) -> list:
    rng = random.Random(seed)
    notices = []
    while (decision := referee.decision()) is not None:
        notices += referee.answer(random_answer(decision.legal_actions, decision.view, rng), elapsed_s)
    return notices


def test_a_clean_match_matches_the_engine_and_notifies_every_hand() -> None:
    referee = Referee("m1", 5, Rules(), NAMES, TimeControl(time_limit_ms=50, bank_ms=100))
    notices = play(referee)
    outcome = referee.outcome()
    twin = Match(Rules(), seed=5)
    rng = random.Random(0)
    while not twin.is_over:
        twin.apply(random_answer(twin.legal_actions(), twin.view(twin.to_move), rng))
    assert outcome.winner == twin.winner and outcome.score == twin.score and not outcome.forfeit
    assert [r.to_dict() for r in outcome.records] == twin.records and outcome.faults == ()
    hand_overs = [n for n in notices if n.kind == "hand_over"]
    assert len(hand_overs) == 2 * len(twin.results)
    assert all(n.view["result"] is not None and n.view["legal_actions"] == [] for n in hand_overs)
    assert [n.view["match"]["hand_index"] for n in hand_overs[::2]] == list(range(len(twin.results)))
    over = [n for n in notices if n.kind == "match_over"]
    assert {n.seat for n in over} == {0, 1} and over[0].winner == twin.winner
    assert len(outcome.think_ms) == sum(len(r["actions"]) for r in twin.records)


def test_the_bank_drains_only_beyond_the_limit() -> None:
    clock = MatchClock(TimeControl(time_limit_ms=100, bank_ms=500))
    assert clock.charge(0, 0.099) and clock.bank_left_ms(0) == 500
    assert clock.charge(0, 0.350) and clock.bank_left_ms(0) == 250
    assert clock.budget_s(0) == pytest.approx(0.350) and clock.bank_left_ms(1) == 500
    assert not clock.charge(0, 0.400)


def test_an_answer_beyond_limit_plus_bank_is_a_timeout_forfeit() -> None:
    referee = Referee("m2", 1, Rules(), NAMES, TimeControl(time_limit_ms=10, bank_ms=20))
    seat = referee.decision().seat
    notices = referee.answer(referee.decision().legal_actions[-1], elapsed_s=0.5, raw=b'{"late": 1}')
    outcome = referee.outcome()
    assert outcome.forfeit and outcome.winner == 1 - seat
    (fault,) = outcome.faults
    assert fault.kind is FaultKind.TIMEOUT and fault.seat == seat and fault.bot == NAMES[seat]
    assert fault.elapsed_ms == 500.0 and fault.bank_ms == 20 and fault.reply == '{"late": 1}'
    assert [n.kind for n in notices] == ["match_over", "match_over"] and notices[0].forfeit
    assert {n.fault for n in notices} == {FaultNote(seat, FaultKind.TIMEOUT, fault.detail)}  # both seats are told
    assert notices[0].fault.to_wire() == {"seat": seat, "kind": "timeout", "detail": fault.detail}


def test_an_illegal_action_forfeits_under_strict_and_is_replaced_under_lenient() -> None:
    strict = Referee("m3", 2, Rules(), NAMES)
    seat = strict.decision().seat
    strict.answer("play XX", 0.001)
    assert strict.finished and strict.outcome().winner == 1 - seat
    assert strict.outcome().faults[0].kind is FaultKind.ILLEGAL
    assert "not an action" in strict.outcome().faults[0].detail

    lenient = Referee("m3", 2, Rules(), NAMES, policy=FaultPolicy.LENIENT)
    first_legal = lenient.decision().legal_actions[0]
    lenient.answer("play XX", 0.001)
    assert not lenient.finished and lenient.match.hand.record()["actions"] == [first_legal]
    assert lenient.outcome().faults[0].kind is FaultKind.ILLEGAL


def test_a_crash_forfeits_even_under_lenient() -> None:
    referee = Referee("m4", 3, Rules(), NAMES, policy=FaultPolicy.LENIENT)
    play_some = referee.decision()
    referee.answer(random_answer(play_some.legal_actions, play_some.view, random.Random(1)), 0.001)
    seat = referee.decision().seat
    referee.fault(Fault(FaultKind.CRASH, seat, NAMES[seat], "exit code 3"))
    assert referee.finished and referee.outcome().forfeit and referee.outcome().winner == 1 - seat


def test_a_harness_fault_voids_the_match_and_charges_nobody() -> None:
    referee = Referee("m5", 4, Rules(), NAMES)
    notices = referee.fault(Fault(FaultKind.HARNESS, None, "arena", "worker died"))
    outcome = referee.outcome()
    assert outcome.void and outcome.winner is None and not outcome.forfeit
    assert not outcome.faults[0].charged and notices[0].winner is None
    assert notices[0].fault == FaultNote(None, FaultKind.HARNESS, "worker died")


def test_forfeit_keeps_finished_hands_and_drops_the_interrupted_one() -> None:
    referee = Referee("m6", 9, Rules(), NAMES)
    rng = random.Random(3)
    while len(referee.match.results) < 1:
        d = referee.decision()
        referee.answer(random_answer(d.legal_actions, d.view, rng), 0.001)
    d = referee.decision()
    referee.answer(random_answer(d.legal_actions, d.view, rng), 0.001)
    if referee.finished:
        pytest.skip("the match ended in its first hand")
    seat = referee.decision().seat
    referee.fault(Fault(FaultKind.MALFORMED, seat, NAMES[seat], "not JSON"))
    outcome = referee.outcome()
    assert len(outcome.results) == len(outcome.records) >= 1
    assert outcome.interrupted is not None and outcome.interrupted.actions


def test_fault_evidence_carries_the_request_sent_and_the_stderr_tail() -> None:
    referee = Referee("m7", 2, Rules(), NAMES)
    seat = referee.decision().seat
    referee.answer("play XX", 0.002, b'{"action": "play XX"}', request=b'{"type": "request", "seq": 9}',
                   stderr_tail=lambda: "Traceback: boom")
    (fault,) = referee.outcome().faults
    assert fault.seat == seat and fault.request == '{"type": "request", "seq": 9}'
    assert fault.reply == '{"action": "play XX"}' and fault.stderr_tail == "Traceback: boom"
    assert fault.elapsed_ms == 2.0


def test_fault_record_fills_the_hand_and_clock_fields_the_conductor_cannot_see() -> None:
    referee = Referee("m7", 3, Rules(), NAMES, TimeControl(time_limit_ms=100, bank_ms=500))
    rng = random.Random(1)
    while not referee.match.results:  # into the second hand, with seat 0's bank drained a little
        decision = referee.decision()
        assert decision is not None
        referee.answer(random_answer(decision.legal_actions, decision.view, rng), 0.150 if decision.seat == 0 else 0.01)
    timed = referee.fault_record(FaultKind.TIMEOUT, 0, "no answer", request=b'{"seq": 9}', reply=b"x" * 5000,
                                 elapsed_s=0.6, dropped_replies=2)
    assert (timed.match_id, timed.bot, timed.hand_index) == ("m7", "alpha", 1)
    assert timed.time_limit_ms == 100 and timed.bank_ms == referee.clock.bank_left_ms(0) < 500
    assert timed.elapsed_ms == 600.0 and timed.request == '{"seq": 9}' and timed.dropped_replies == 2
    assert timed.reply is not None and timed.reply.startswith("x" * 2048 + "...")
    # a death outside any request: evidence already cut is kept as it is, and no clock fields
    death = referee.fault_record(FaultKind.CRASH, 1, "exited", request=None, reply="cut... [9 more]",
                                 elapsed_s=None, exit="exit status 3")
    assert (death.bot, death.reply, death.exit) == ("beta", "cut... [9 more]", "exit status 3")
    assert death.elapsed_ms is None and death.time_limit_ms is None and death.bank_ms is None


def test_a_finished_matchs_outcome_is_made_once_and_remade_for_a_later_fault() -> None:
    referee = Referee("m1", 5, Rules(), NAMES, TimeControl(time_limit_ms=50, bank_ms=100))
    play(referee)
    first = referee.outcome()
    assert referee.outcome() is first  # the conductor and the feed ask for it again: not rebuilt
    late = referee.fault_record(FaultKind.DISCONNECT, 1, "link lost after the end", request=None, reply=None,
                                elapsed_s=None)
    assert referee.fault(late) == []  # the match is over: nothing to apply
    again = referee.outcome()
    assert again.faults == (late,) and first.faults == ()  # the fault recorded after the end is kept
    assert again.score == first.score and again.think_ms == first.think_ms
