"""Whole matches between real bot processes over real sockets.

- no leak: every card named in any message to a seat is one that seat could know then;
- ``max_games > 1`` (games interleaved on one connection) gives the same matches as one game
  at a time;
- ``arena match`` end to end;
- process reuse across matches, never for both halves of a pair;
- a bot's clock starts once it is thawed and runs while others are frozen and thawed, and a
  bot asked again at once is not frozen in between.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
import zmq

from arena import matchplay
from arena.botproc import BotProcess, Manifest, load_manifest
from arena.botproc.process import KILL_TIMEOUT_S
from arena.clock import TimeControl
from arena.conductor import play_fed, play_matches
from arena.engine import CARD_NAMES, SUITS, Hand, Rules
from arena.engine.cards import cards_of
from arena.engine.records import FaultKind, HandRecord, MatchOutcome
from arena.matchplay import MatchSettings, MatchSpec, SessionPool, play_at_once, play_match
from arena.referee import Referee, Refereeing
from arena.session import BotSession, SlowStep

from .conftest import BOTFIXTURES

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
RANDOM = REPO / "bots" / "random"
FAULTY = REPO / "bots" / "faulty"
CARD = re.compile(r"(?<![A-Za-z0-9])[ATKQJ9][CDHS](?![A-Za-z0-9])")
CLI_TIMEOUT_S = 60.0


@pytest.fixture
def random_bot() -> Manifest:
    return load_manifest(RANDOM)


# ---------------------------------------------------------------------------- no leak


def cards_in(value: Any) -> set[str]:
    """Every card name in any string inside ``value`` (actions such as "play KS" included)."""
    if isinstance(value, str):
        return set(CARD.findall(value))
    if isinstance(value, dict):
        return set().union(*(cards_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(cards_in(v) for v in value)) if value else set()
    return set()


def expected_messages(record: HandRecord, seat: int) -> list[tuple[str, list[str] | None, frozenset[str]]]:
    """What ``seat`` must be sent during one recorded hand, with what it may know at each send.

    The knowledge is computed here from the true state, independently of the engine's view
    code: the seat's own cards (ever held), every card played (forced plays the engine made
    itself included: a card in neither hand nor the stock), every up-card shown, and both
    cards of each marriage declared. The opponent's unseen cards and the face-down stock are
    never in it. Reads the hand's rules core on purpose: it is the truth.
    """
    hand = Hand.deal(record.deck, record.dealer, record.rules)
    known: set[str] = set()

    truth = hand.core

    def learn() -> None:
        unplayed = {*cards_of(truth.hands[0]), *cards_of(truth.hands[1]), *truth.stock, *truth.dead}
        known.update(CARD_NAMES[c] for c in range(len(CARD_NAMES)) if c not in unplayed)
        known.update(CARD_NAMES[c] for c in cards_of(truth.hands[seat]))
        if truth.stock:
            known.add(CARD_NAMES[truth.stock[0]])  # the face-up up-card
        for event in truth.log or ():
            if event[0] == "meld":  # ("meld", seat, suit, value)
                known.update(("K" + SUITS[event[2]], "Q" + SUITS[event[2]]))

    learn()
    opponent_cards = {CARD_NAMES[c] for c in cards_of(truth.hands[1 - seat])}
    face_down = {CARD_NAMES[c] for c in truth.stock[1:]}
    # the check has teeth: at the deal, neither hidden set is knowable
    assert not (known & opponent_cards) and not (known & face_down) and len(known) == 7
    out: list[tuple[str, list[str] | None, frozenset[str]]] = []
    for action in record.actions:  # the decisions (forced moves are applied by the engine)
        if hand.to_move == seat:
            out.append(("request", hand.legal_actions(), frozenset(known)))
        hand.apply(action)
        learn()
    assert hand.is_over
    out.append(("hand_over", None, frozenset(known)))
    return out


@pytest.mark.parametrize("profile", ["default", "santase"])
def test_no_message_names_a_card_its_seat_could_not_know(
    profile: str, random_bot: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[BotSession, bytes]] = []
    real_send = BotSession.send

    def spy(self: BotSession, payload: bytes) -> bool:
        sent.append((self, payload))
        return real_send(self, payload)

    monkeypatch.setattr(BotSession, "send", spy)
    seeds = range(100, 105)
    with SessionPool(tmp_path, MatchSettings(rules=Rules.profile(profile))) as pool:
        outcomes = [play_match(pool, (random_bot, random_bot), f"leak-{seed}", seed) for seed in seeds]

    checked = 0
    for outcome in outcomes:
        assert not outcome.faults and outcome.interrupted is None
        by_seat: dict[int, list[tuple[BotSession, dict[str, Any]]]] = defaultdict(list)
        for session, payload in sent:
            msg = json.loads(payload)
            if msg.get("game_id") == outcome.match_id:
                by_seat[msg["seat"]].append((session, msg))
        receivers = [{id(s) for s, _ in by_seat[seat]} for seat in (0, 1)]
        assert all(len(r) == 1 for r in receivers) and receivers[0] != receivers[1]
        for seat in (0, 1):
            got = [msg for _, msg in by_seat[seat]]
            assert got[-1]["type"] == "match_over" and not cards_in(got[-1])
            expected = [e for record in outcome.records for e in expected_messages(record, seat)]
            assert [m["type"] for m in got[:-1]] == [kind for kind, _, _ in expected]
            for msg, (kind, legal, known) in zip(got, expected):
                assert msg["seat"] == seat and msg["view"]["seat"] == seat
                if kind == "request":
                    assert msg["legal_actions"] == legal  # the walk is aligned with the wire
                leaked = cards_in(msg) - known
                assert not leaked, f"{kind} to seat {seat} of {outcome.match_id} names {sorted(leaked)}"
                checked += 1
    assert checked > 200


# ---------------------------------------------------------------------------- max_games


def outcome_key(outcome: MatchOutcome) -> tuple[Any, ...]:
    return (outcome.winner, outcome.score, outcome.records, [r.to_dict() for r in outcome.results],
            outcome.faults, outcome.forfeit)


def test_max_games_gives_the_same_matches_as_one_at_a_time(
    random_bot: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 6
    seeds = [200 + i for i in range(n)]
    sent: list[tuple[BotSession, str]] = []
    real_send = BotSession.send

    def spy(self: BotSession, payload: bytes) -> bool:
        msg = json.loads(payload)
        if msg["type"] == "request":
            sent.append((self, msg["game_id"]))
        return real_send(self, payload)

    monkeypatch.setattr(BotSession, "send", spy)
    settings = MatchSettings(max_games=n)
    with SessionPool(tmp_path / "multi", settings) as pool:
        pairs = []
        for _ in seeds:
            first = pool.acquire(random_bot)
            pairs.append((first, pool.acquire(random_bot, exclude=(first,))))
        s0, s1 = pairs[0]
        assert s0 is not s1 and all(pair == (s0, s1) for pair in pairs)
        assert s0.max_games == s1.max_games == n
        games = [(Referee(f"mux-{seed}", seed, settings.rules, ("random", "random"), settings.time_control,
                          settings.policy), pair) for seed, pair in zip(seeds, pairs)]
        multiplexed = play_matches(games)
        for first, second in pairs:
            pool.release(first, faulted=False)
            pool.release(second, faulted=False)
    # the games really were interleaved on each connection
    order = [game for session, game in sent if session is s0]
    switches = sum(a != b for a, b in zip(order, order[1:]))
    assert len(set(order)) == n and switches > 2 * n

    with SessionPool(tmp_path / "single", MatchSettings(max_games=1)) as pool:
        single = [play_match(pool, (random_bot, random_bot), f"mux-{seed}", seed) for seed in seeds]

    for one, many in zip(single, multiplexed):
        assert not many.faults and many.winner in (0, 1)
        assert outcome_key(many) == outcome_key(one), one.match_id


SLOW_S = 0.25  # far more than a thaw takes (a millisecond at worst), far less than the limit


def busy(seconds: float) -> None:
    """Keep this process busy for ``seconds``: the harness slowed down, as a loaded machine makes it."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def slow_kills(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every kill of a live bot take ``SLOW_S`` of the harness's time (later calls find it reaped)."""
    real_kill = BotProcess.kill

    def slow_kill(self: BotProcess, timeout: float = KILL_TIMEOUT_S) -> bool:
        if self.poll() is None:
            busy(SLOW_S)
        return real_kill(self, timeout)

    monkeypatch.setattr(BotProcess, "kill", slow_kill)


def referees(prefix: str, seed: int, settings: MatchSettings,
             seated: list[tuple[BotSession, BotSession]]) -> list[tuple[Refereeing, tuple[BotSession, BotSession]]]:
    """A referee for each seated pair of sessions: matches ``prefix-i``, seeds from ``seed``."""
    return [(Referee(f"{prefix}-{i}", seed + i, settings.rules, (pair[0].name, pair[1].name), settings.time_control,
                     settings.policy), pair) for i, pair in enumerate(seated)]


def test_sessions_kept_for_lock_step_play_give_multiplexed_play_no_room(random_bot: Manifest, tmp_path: Path) -> None:
    """A worker that played a lock-step pair keeps its (pinned) processes idle; a multiplexed
    batch after it must still wait when its own processes are full, not count those as room."""
    with SessionPool(tmp_path, MatchSettings(max_games=1)) as pool:
        pool.one_game_at_a_time = True
        pool.release(pool.acquire(random_bot), faulted=False)
        assert pool.has_room()
        pool.one_game_at_a_time = False
        assert not pool.has_room()
        mine = pool.acquire(random_bot)
        assert not mine.pinned and mine is not pool.idle[0]
        assert not pool.has_room()
        pool.release(mine, faulted=False)
        assert pool.has_room()


def test_a_bot_is_not_charged_for_its_own_thaw(random_bot: Manifest, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot cannot think while it is frozen, so its clock starts once it is thawed, however
    long the thaw takes (before the fix the clock started before the thaw)."""
    real_thaw = BotProcess.thaw

    def slow_thaw(self: BotProcess) -> None:
        busy(SLOW_S)
        real_thaw(self)

    monkeypatch.setattr(BotProcess, "thaw", slow_thaw)
    settings = MatchSettings()
    with SessionPool(tmp_path, settings) as pool:
        first = pool.acquire(random_bot)
        seats = (first, pool.acquire(random_bot, exclude=(first,)))
        [outcome] = play_matches([(Referee("thaw", 300, settings.rules, ("random", "random"), settings.time_control,
                                           settings.policy), seats)])
    assert not outcome.faults and outcome.winner in (0, 1) and len(outcome.think_ms) > 10
    assert max(think.wall_ms for think in outcome.think_ms) < SLOW_S * 1000.0


def test_a_bot_asked_again_at_once_is_not_frozen_in_between(random_bot: Manifest, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A seat that moves several times in a row (it won the trick it followed, or melds before
    it leads) is frozen once at the end of the run, not after each move: its next request is
    already queued when the round's answers are handled."""
    freezes: Counter[int] = Counter()
    real_freeze = BotProcess.freeze

    def counting_freeze(self: BotProcess) -> None:
        freezes[id(self)] += 1
        real_freeze(self)

    settings = MatchSettings()
    with SessionPool(tmp_path, settings) as pool:
        first = pool.acquire(random_bot)
        seats = (first, pool.acquire(random_bot, exclude=(first,)))
        monkeypatch.setattr(BotProcess, "freeze", counting_freeze)  # after the handshakes' freezes
        [outcome] = play_matches([(Referee("runs", 301, settings.rules, ("random", "random"), settings.time_control,
                                           settings.policy), seats)])
        monkeypatch.undo()
    movers = [think.seat for think in outcome.think_ms]
    runs = Counter(seat for i, seat in enumerate(movers) if i + 1 == len(movers) or movers[i + 1] != seat)
    assert not outcome.faults and len(movers) > sum(runs.values())  # a seat moved twice in a row
    for seat, session in enumerate(seats):
        assert session.process is not None
        assert freezes[id(session.process)] == runs[seat], (seat, freezes[id(session.process)], runs[seat], len(movers))


STALL_S = 0.01  # what each freeze and thaw costs the harness here: a slow machine's, tenfold


def test_other_bots_freezes_and_thaws_give_a_thinking_bot_no_extra_time(
    random_bot: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The slow bot thinks past its limit in one match while random bots play two others in the
    same conductor, each of their moves costing the harness a freeze and a thaw. The slow bot is
    thawed and thinking all that time, so its clock runs on and it times out. (Stopping the clocks
    during freezes and thaws, as ef9db32 did, handed it the stalls: a bot could win time by
    making the arena freeze and thaw its other games' opponents.)"""
    for step in ("freeze", "thaw"):
        real = getattr(BotProcess, step)

        def stalled(self: BotProcess, real: Any = real) -> None:
            real(self)
            busy(STALL_S)

        monkeypatch.setattr(BotProcess, step, stalled)
    settings = MatchSettings(time_control=TimeControl(time_limit_ms=200, bank_ms=1000))  # the slow bot takes both and 50 ms
    slow = load_manifest(FAULTY / "slow")
    with SessionPool(tmp_path, settings) as pool:
        first = pool.acquire(slow)
        seated = [(first, pool.acquire(random_bot, exclude=(first,)))]
        for _ in range(2):  # new processes: none may be in two matches at once with max_games 1
            taken = tuple(s for pair in seated for s in pair)
            one = pool.acquire(random_bot, exclude=taken)
            seated.append((one, pool.acquire(random_bot, exclude=(one, *taken))))
        games = referees("stall", 400, settings, seated)
        slowed, *others = play_matches(games)
    assert [(f.kind, f.seat) for f in slowed.faults] == [(FaultKind.TIMEOUT, 0)], slowed.faults
    assert slowed.forfeit and slowed.winner == 1
    assert all(not outcome.faults and outcome.winner in (0, 1) for outcome in others)


def test_a_bot_killed_mid_round_costs_the_bots_thinking_elsewhere_nothing(
    random_bot: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot that breaks the protocol is killed inside the poll round that reads it, while the
    other matches' bots think. Their clocks stop for the kill (slowed here to 250 ms, far past
    the 100 ms a ponder bot thinks): before the fix, the ponder bot's answer waited unread
    through the kill and it timed out at a 200 ms limit."""
    slow_kills(monkeypatch)
    settings = MatchSettings(time_control=TimeControl(time_limit_ms=200, bank_ms=0))
    ponder = load_manifest(BOTFIXTURES / "ponder")
    with SessionPool(tmp_path, settings) as pool:
        hostile = pool.acquire(load_manifest(REPO / "bots/hostile/rehello"))
        seated = [(hostile, pool.acquire(random_bot, exclude=(hostile,)))]
        thinker = pool.acquire(ponder, exclude=(*seated[0],))
        seated.append((thinker, pool.acquire(ponder, exclude=(*seated[0], thinker))))
        games = referees("kill", 500, settings, seated)
        killed, thought = play_matches(games)
    assert [(f.kind, f.seat) for f in killed.faults] == [(FaultKind.PROTOCOL, 0)], killed.faults
    assert not thought.faults and thought.winner in (0, 1), thought.faults
    assert len(thought.think_ms) > 10 and max(think.wall_ms for think in thought.think_ms) < SLOW_S * 1000.0


def test_a_bot_killed_in_its_handshake_costs_the_bots_thinking_elsewhere_nothing(
    random_bot: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot whose hello carries a forged token is killed inside the handshake step of the poll
    loop, while a match already in play thinks. The ponder bots' clocks stop for the kill (slowed
    to 250 ms, past their 200 ms limit with no bank): only the forger is charged."""
    slow_kills(monkeypatch)
    settings = MatchSettings(time_control=TimeControl(time_limit_ms=200, bank_ms=0))
    ponder = load_manifest(BOTFIXTURES / "ponder")
    with SessionPool(tmp_path, settings) as pool:
        thinker = pool.acquire(ponder)
        seated = [(thinker, pool.acquire(ponder, exclude=(thinker,)))]
        forger = pool.take(load_manifest(REPO / "bots/hostile/forgedtoken"))  # greeted by the conductor, in play
        assert forger.starting
        seated.append((forger, pool.acquire(random_bot, exclude=(*seated[0], forger))))
        games = referees("forge", 600, settings, seated)
        thought, forged = play_matches(games)
    assert [(f.kind, f.seat) for f in forged.faults] == [(FaultKind.PROTOCOL, 0)], forged.faults
    assert "wrong token" in forged.faults[0].detail
    assert not thought.faults and thought.winner in (0, 1), thought.faults
    assert len(thought.think_ms) >= 8 and max(think.wall_ms for think in thought.think_ms) < SLOW_S * 1000.0


class _SlowToHearOfEnds:
    """A feed that admits its matches at once and takes ``SLOW_S`` to hear of the first end (a
    runner storing a result, or closing and starting processes, on a loaded machine)."""

    def __init__(self, games: list[tuple[Refereeing, tuple[BotSession, BotSession]]]) -> None:
        self.games = games
        self.ends: list[str] = []

    def admit(self, playing: int) -> list[tuple[Refereeing, tuple[BotSession, BotSession]]]:
        games, self.games = self.games, []
        return games

    def ended(self, seated: tuple[Refereeing, tuple[BotSession, BotSession]], outcome: MatchOutcome) -> None:
        self.ends.append(outcome.match_id)
        if len(self.ends) == 1:
            busy(SLOW_S)

    def set_slow_step(self, slow_step: SlowStep) -> None:
        return None  # it starts and closes no process


def test_the_time_a_feed_takes_between_matches_costs_the_bots_thinking_elsewhere_nothing(
    random_bot: Manifest, tmp_path: Path
) -> None:
    """A random match ends while ponder bots think in another; the feed takes 250 ms to hear of
    it, past the ponder bots' 200 ms limit with no bank. The clocks of the requests out stop
    meanwhile (the conductor's ``_stopped_clocks``): without that, the ponder bot thinking then
    times out."""
    settings = MatchSettings(time_control=TimeControl(time_limit_ms=200, bank_ms=0))
    ponder = load_manifest(BOTFIXTURES / "ponder")
    with SessionPool(tmp_path, settings) as pool:
        thinker = pool.acquire(ponder)
        seated = [(thinker, pool.acquire(ponder, exclude=(thinker,)))]
        quick = pool.acquire(random_bot, exclude=seated[0])
        seated.append((quick, pool.acquire(random_bot, exclude=(*seated[0], quick))))
        feed = _SlowToHearOfEnds(referees("feed", 700, settings, seated))
        thought, played = play_fed(feed)
    assert feed.ends == ["feed-1", "feed-0"]  # the random match ended first, mid-ponder
    assert not played.faults and not thought.faults and thought.winner in (0, 1), thought.faults
    assert len(thought.think_ms) > 10 and max(think.wall_ms for think in thought.think_ms) < SLOW_S * 1000.0


@pytest.mark.requires("cgroups")
def test_a_bot_that_makes_the_arena_start_processes_hands_nobody_free_thinking_time(
    random_bot: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``clockstop`` resets its link at each first request, so each of its matches after the first
    few needs a process started while ``freeloader`` thinks in the others; every start takes the
    harness 250 ms here. The clocks stop for a start (the feed's step in ``_admit``), and the
    bots thinking are frozen through it: no decision of the freeloader's gets more CPU than wall
    time. Without the freeze it got up to a start's length."""
    real_launch = matchplay.launch_session
    launches: list[int] = []

    def slow_launch(*args: Any, **kwargs: Any) -> BotSession:
        launches.append(1)
        busy(SLOW_S)
        return real_launch(*args, **kwargs)

    monkeypatch.setattr(matchplay, "launch_session", slow_launch)
    freeloader, clockstop = (load_manifest(REPO / "bots" / "hostile" / name) for name in ("freeloader", "clockstop"))
    specs = [MatchSpec((freeloader, random_bot), f"free-{i}", 800 + i) for i in range(4)]
    specs += [MatchSpec((clockstop, random_bot), f"stop-{i}", 900 + i) for i in range(8)]
    with SessionPool(tmp_path, MatchSettings(max_games=4)) as pool:
        outcomes = play_at_once(pool, specs)
    free, stopped = outcomes[:4], outcomes[4:]
    assert all(not o.faults and o.winner in (0, 1) for o in free), [o.faults for o in free]
    assert all([f.kind for f in o.faults] == [FaultKind.DISCONNECT] and o.faults[0].seat == 0 for o in stopped)
    assert len(launches) >= 5  # the first processes, and clockstop's again once its first died
    thinks = [think for o in free for think in o.think_ms if think.seat == 0]
    assert thinks and all(think.cpu_ms is not None for think in thinks)
    assert [t.cpu_ms - t.wall_ms for t in thinks if t.cpu_ms is not None and t.cpu_ms > t.wall_ms + 50.0] == []


@pytest.mark.requires("cgroups")
def test_a_bot_killed_in_its_handshake_hands_nobody_free_thinking_time(
    random_bot: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``forgedtoken``'s hello is refused and it is killed in the handshake step of the poll loop
    (the kill slowed to 250 ms), while ``freeloader`` thinks in a match already in play. The
    clocks stop for the kill and the bots thinking are frozen through it: no decision of the
    freeloader's gets more CPU than wall time. Without the freeze it got up to the kill's length."""
    slow_kills(monkeypatch)
    freeloader = load_manifest(REPO / "bots" / "hostile" / "freeloader")
    settings = MatchSettings()
    with SessionPool(tmp_path, settings) as pool:
        thinker = pool.acquire(freeloader)
        seated = [(thinker, pool.acquire(random_bot, exclude=(thinker,)))]
        forger = pool.take(load_manifest(REPO / "bots" / "hostile" / "forgedtoken"))  # greeted by the conductor
        assert forger.starting
        seated.append((forger, pool.acquire(random_bot, exclude=(*seated[0], forger))))
        free, forged = play_matches(referees("handshake-kill", 650, settings, seated))
    assert [(f.kind, f.seat) for f in forged.faults] == [(FaultKind.PROTOCOL, 0)], forged.faults
    assert not free.faults and free.winner in (0, 1), free.faults
    thinks = [think for think in free.think_ms if think.seat == 0]
    assert thinks and all(think.cpu_ms is not None for think in thinks)
    assert [t.cpu_ms - t.wall_ms for t in thinks if t.cpu_ms is not None and t.cpu_ms > t.wall_ms + 50.0] == []


READY_TIMEOUT_S = 30.0  # far past a bot's answer, which comes in milliseconds


def poll_once_when_ready(monkeypatch: pytest.MonkeyPatch, sessions: tuple[BotSession, ...]) -> None:
    """Make the next poll return only once every one of ``sessions`` has a message waiting, so
    that their answers are handled in one round (as a busy arena reads them), in the order the
    conductor registered their links."""
    real_poll = zmq.Poller.poll
    pending = [True]

    def poll(self: zmq.Poller, timeout: int | None = None) -> list[tuple[Any, int]]:
        if not pending:
            return real_poll(self, timeout)
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            events = real_poll(self, 50)
            ready = {sock for sock, _ in events}
            if all(session.socket in ready for session in sessions) or time.monotonic() > deadline:
                pending.clear()
                return events

    monkeypatch.setattr(zmq.Poller, "poll", poll)


@pytest.mark.requires("cgroups")
def test_a_bot_asked_again_in_the_round_of_a_kill_is_frozen_through_it(
    random_bot: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``keepmove`` closes at its first lead, so it is asked again at once, and spins from its
    answer to its next request; in the same round ``rehello`` breaks the protocol and is killed
    (slowed to 250 ms). A bot asked again at once is not frozen between its answer and its next
    request, but through a kill it is: no decision of ``keepmove``'s gets more CPU than wall
    time. Without that it thought through the kill, and its next decision had the kill's CPU."""
    slow_kills(monkeypatch)
    settings = MatchSettings()
    with SessionPool(tmp_path, settings) as pool:
        keeper = pool.acquire(load_manifest(REPO / "bots" / "hostile" / "keepmove"))
        seated = [(keeper, pool.acquire(random_bot, exclude=(keeper,)))]
        breaker = pool.acquire(load_manifest(REPO / "bots" / "hostile" / "rehello"), exclude=(*seated[0],))
        seated.append((breaker, pool.acquire(random_bot, exclude=(*seated[0], breaker))))
        games = referees("keep", 901, settings, seated)  # seat 0 leads first in both, and may close
        first = games[0][0].decision()
        assert first is not None and first.seat == 0 and "close" in first.legal_actions
        poll_once_when_ready(monkeypatch, (keeper, breaker))
        kept, broken = play_matches(games)
    assert [(f.kind, f.seat) for f in broken.faults] == [(FaultKind.PROTOCOL, 0)], broken.faults
    assert not kept.faults and kept.winner in (0, 1), kept.faults
    thinks = [think for think in kept.think_ms if think.seat == 0]
    assert len(thinks) > 1 and all(think.cpu_ms is not None for think in thinks)
    assert [t.cpu_ms - t.wall_ms for t in thinks if t.cpu_ms is not None and t.cpu_ms > t.wall_ms + 50.0] == []


@pytest.mark.requires("cgroups")
def test_a_harness_failure_mid_match_leaves_no_bot_thawed_or_owing(
    random_bot: Manifest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The conductor fails (its first poll raises, as a harness bug would) while ``keepmove`` has
    a request out. Its session goes back to the pool frozen and owing nothing, so it is frozen
    again after its next match: before, it counted the lost request forever, stayed thawed, and
    was never frozen again, thinking on its opponents' time in every later match."""
    real_poll = zmq.Poller.poll

    def failing_poll(self: zmq.Poller, timeout: int | None = None) -> list[tuple[Any, int]]:
        monkeypatch.setattr(zmq.Poller, "poll", real_poll)  # once
        raise zmq.ZMQError(msg="a harness failure")

    settings = MatchSettings()
    with SessionPool(tmp_path, settings) as pool:
        keeper = pool.acquire(load_manifest(REPO / "bots" / "hostile" / "keepmove"))
        seated = [(keeper, pool.acquire(random_bot, exclude=(keeper,)))]
        assert keeper.process is not None and keeper.process.cgroup is not None
        cgroup = keeper.process.cgroup
        monkeypatch.setattr(zmq.Poller, "poll", failing_poll)
        with pytest.raises(zmq.ZMQError, match="a harness failure"):
            play_matches(referees("failed", 901, settings, seated))  # keepmove's first request is out
        assert keeper.alive and not keeper.thinking and cgroup.frozen
        again, = play_matches(referees("again", 901, settings, seated))
        assert not again.faults and again.winner in (0, 1), again.faults
        assert not keeper.thinking and cgroup.frozen


# ---------------------------------------------------------------------------- CLI


def arena_cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("arena")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "arena.cli"]
    return subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True, timeout=CLI_TIMEOUT_S,
                          check=False)


@pytest.mark.e2e
def test_arena_match_cli_text_and_json_agree(tmp_path: Path) -> None:
    text = arena_cli("match", "bots/random", "bots/random", "--seed", "5", "--run-dir", str(tmp_path / "t"))
    assert text.returncode == 0, text.stderr
    as_json = arena_cli("match", "bots/random", "bots/random", "--seed", "5", "--json",
                        "--run-dir", str(tmp_path / "j"))
    assert as_json.returncode == 0, as_json.stderr
    outcome = json.loads(as_json.stdout)

    assert outcome["match_id"] == "match-5" and outcome["seed"] == 5
    assert outcome["faults"] == [] and not outcome["forfeit"] and outcome["winner"] in (0, 1)
    lines = text.stdout.splitlines()
    assert lines[0].startswith("random#0 (seat 0) vs random#1 (seat 1), seed 5 (public deals")
    assert sum(line.startswith("Hand ") for line in lines) == len(outcome["records"]) == len(outcome["results"])
    winner = outcome["winner"]
    score = "-".join(map(str, outcome["score"]))
    assert f"random#{winner} (seat {winner}) wins {score}" in lines
    assert "FAULT" not in text.stdout


@pytest.mark.e2e
def test_arena_match_cli_shows_a_fault(tmp_path: Path) -> None:
    done = arena_cli("match", "bots/faulty/illegal", "bots/random", "--seed", "5", "--run-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    fault_lines = [line for line in done.stdout.splitlines() if line.startswith("FAULT ")]
    assert len(fault_lines) == 1
    assert fault_lines[0].startswith("FAULT illegal by seat 0 (faulty-illegal): 'play ")
    assert "  reply: " in done.stdout
    assert "random (seat 1) wins by forfeit" in done.stdout


# ---------------------------------------------------------------------------- reuse


def test_processes_are_reused_but_never_for_both_halves_of_a_pair(random_bot: Manifest, tmp_path: Path) -> None:
    a = random_bot
    b = dataclasses.replace(random_bot, name="random-b")  # a second bot (same program)
    with SessionPool(tmp_path, MatchSettings()) as pool:
        acquired: list[BotSession] = []
        real_take = pool.take

        def spy(manifest: Manifest, pair_key: Any = None, **kwargs: Any) -> BotSession:
            session = real_take(manifest, pair_key, **kwargs)
            acquired.append(session)
            return session

        pool.take = spy  # type: ignore[method-assign]

        first = play_match(pool, (a, b), "pair1-a", 31, pair_key=1)
        a1, b1 = acquired[-2:]
        second = play_match(pool, (b, a), "pair1-b", 31, pair_key=1)
        b2, a2 = acquired[-2:]
        third = play_match(pool, (a, b), "pair2-a", 32, pair_key=2)
        a3, b3 = acquired[-2:]

        for outcome in (first, second, third):
            assert not outcome.faults and outcome.winner in (0, 1)
        pid = {s: s.process.pid for s in (a1, b1, a2, b2, a3, b3)}  # type: ignore[union-attr]
        assert (a1.manifest, b1.manifest, a2.manifest, b2.manifest) == (a, b, a, b)
        # the two halves of pair 1 never share a process, for either bot
        assert pid[a1] != pid[a2] and pid[b1] != pid[b2]
        assert len({pid[a1], pid[b1], pid[a2], pid[b2]}) == 4
        # pair 2 reuses processes that are still running from pair 1
        assert pid[a3] in (pid[a1], pid[a2]) and pid[b3] in (pid[b1], pid[b2])
        assert a3.alive and b3.alive
        assert {1, 2} <= a3.served_pairs and {1, 2} <= b3.served_pairs
