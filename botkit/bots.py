"""The reference bots as SDK classes: ``run(GreedyBot)`` in a bot folder, or in-process as
``GreedyBot(game_id, seat, rules=Rules()).act(view, legal_actions)``.

Every bot reads only its view. Search bots take a ``budget`` (worlds or iterations): the
constructor's, else the ``BOT_BUDGET`` environment variable, else their default. Their random
stream is seeded from ``(BOT_SEED, game_id, seat)``, so a game's moves are reproducible. If the
arena's per-decision limit is under 1000 ms the budget shrinks in proportion (a function of
the limit, not of the clock, so play stays deterministic). As a safety net only, a search
also stops once 70% of the request's time limit has passed (an overloaded machine); in
process, with no limit set, play depends on the seed alone.
"""

from __future__ import annotations

import os
import random
import time
from typing import Any, ClassVar

from arena.engine import Rules
from arena.engine.core import ACTION_INDEX, ACTION_NAMES, FINAL, Core
from protocol.client import Bot

from . import ismcts
from .endgame import action_values, value
from .knowledge import Knowledge, Situation
from .policies import expert, greedy
from .worlds import best_action, candidate_actions, pimc_values, worlds

ENV_BUDGET = "BOT_BUDGET"
ENV_SEED = "BOT_SEED"
ENDGAME_WORLDS = 30  # worlds of the Phase-B search of pimc and ismcts (expert_ab's budget)
_RULES_CACHE: dict[tuple[tuple[str, Any], ...], Rules] = {}


def rules_from_dict(options: dict[str, Any]) -> Rules:
    """``Rules(**options)``, cached; unknown options (a newer arena) fall back to the defaults."""
    key = tuple(sorted(options.items()))
    rules = _RULES_CACHE.get(key)
    if rules is None:
        try:
            rules = Rules(**options)
        except ValueError:
            rules = Rules()
        _RULES_CACHE[key] = rules
    return rules


class LadderBot(Bot):
    """Common plumbing: rules, seeding, budget, string <-> int actions, up-card memory."""

    version = "1.0"
    max_games = 8
    default_budget: ClassVar[int] = 0

    def __init__(self, game_id: str, seat: int, *, rules: Rules | None = None, budget: int | None = None,
                 seed: str | None = None) -> None:
        super().__init__(game_id, seat)
        self._fixed_rules = rules
        env_budget = os.environ.get(ENV_BUDGET)
        self.budget = budget if budget is not None else int(env_budget) if env_budget else self.default_budget
        base = seed if seed is not None else os.environ.get(ENV_SEED, "0")
        self.rng = random.Random(f"{base}:{game_id}:{seat}")
        self._up_seen: tuple[Any, int] = (None, -1)  # (hand key, last up-card seen)
        self.deadline: float | None = None  # the safety net of the current decision

    @property
    def engine_rules(self) -> Rules:
        """The rules of this game: the constructor's, else the welcome's (via the SDK)."""
        return self._fixed_rules if self._fixed_rules is not None else rules_from_dict(self.rules)

    def scaled(self, budget: int) -> int:
        """``budget`` scaled down when the arena's decision limit is under 1000 ms."""
        limit = self.time_limit_ms
        if 0 < limit < 1000:
            return max(1, budget * limit // 1000)
        return budget

    def effective_budget(self) -> int:
        """This bot's budget for the current request."""
        return self.scaled(self.budget)

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        """Answer a request: the subclass's ``choose`` on int actions."""
        key = (view.get("match", {}).get("hand_index"), view["dealer"])
        if view["up_card"] is not None:
            self._up_seen = (key, ACTION_INDEX["play " + view["up_card"]])
        legal = [ACTION_INDEX[a] for a in legal_actions]
        if len(legal) == 1:
            return legal_actions[0]
        limit = self.time_limit_ms
        self.deadline = time.monotonic() + 0.7 * limit / 1000 if limit > 0 else None
        return ACTION_NAMES[self.choose(view, legal)]

    def dead_up_card(self, view: dict[str, Any]) -> int:
        """The up-card a close turned down, if this bot saw it (else -1)."""
        for e in view["events"]:
            if e["type"] == "exchange":
                return ACTION_INDEX["play " + e["gave"]]
        key = (view.get("match", {}).get("hand_index"), view["dealer"])
        return self._up_seen[1] if self._up_seen[0] == key else -1

    def knowledge(self, view: dict[str, Any]) -> Knowledge:
        """Card counting for this view."""
        return Knowledge(view, self.engine_rules, self.dead_up_card(view))

    def choose(self, view: dict[str, Any], legal: list[int]) -> int:
        """Pick one of ``legal`` (int actions, at least two)."""
        raise NotImplementedError


class GreedyBot(LadderBot):
    """One-ply rules: exchanges the nine, melds (40 first), wins cheaply, never closes."""

    name = "greedy"

    def choose(self, view: dict[str, Any], legal: list[int]) -> int:
        return greedy(Situation.from_view(view, self.engine_rules), legal)


class ExpertBot(LadderBot):
    """Card counting and hand-written strategy (safe closes, marriages, trump management)."""

    name = "expert"

    def choose(self, view: dict[str, Any], legal: list[int]) -> int:
        return expert(self.knowledge(view).situation, legal)


def exact_values(g: Core, actions: list[int], seat: int) -> dict[int, float]:
    """Exact alpha-beta values of ``actions`` in one world (ints as floats)."""
    return {a: float(v) for a, v in action_values(g, seat, actions).items()}


def rollout_value(g: Core, seat: int) -> float:
    """Play ``g`` out with ``expert`` on both sides (each from its own public knowledge) until
    the stock is closed or exhausted, then solve the rest exactly."""
    while g.result is None:
        if not g.stock:
            return float(value(g, seat))
        g.apply(expert(Situation.from_game(g, g.to_move), g.legal))
    return float(g.value(seat))


def rollout_values(g: Core, actions: list[int], seat: int) -> dict[int, float]:
    """Each action followed by an expert rollout with the exact endgame, in one world."""
    out = {}
    for a in actions:
        child = g.copy()
        child.apply(a)
        out[a] = rollout_value(child, seat)
    return out


class SearchBot(LadderBot):
    """What the search bots share: ``expert``'s choice breaks ties, and once the stock is
    closed or exhausted, exact alpha-beta in every world (one world when the opponent's hand
    is known, all of them when there are few, else a sample)."""

    def endgame_worlds(self) -> int:
        """How many worlds the Phase-B search may use."""
        return ENDGAME_WORLDS

    def choose(self, view: dict[str, Any], legal: list[int]) -> int:
        know = self.knowledge(view)
        sit = know.situation
        preferred = expert(sit, legal)
        if sit.phase == FINAL:
            return preferred
        actions = candidate_actions(sit, legal)
        if sit.strict:
            games = worlds(know, self.rng, self.scaled(self.endgame_worlds()))
            return best_action(pimc_values(know, actions, games, exact_values, self.deadline), preferred)
        return self.phase_a(know, actions, legal, preferred)

    def phase_a(self, know: Knowledge, actions: list[int], legal: list[int], preferred: int) -> int:
        """The choice while the stock is open (``actions``: ``legal`` without a false declaration)."""
        raise NotImplementedError


class ExpertABBot(SearchBot):
    """``expert``, plus exact alpha-beta once the stock is closed or exhausted: a small PIMC
    over the unseen cards after a close (``budget`` worlds; all of them when there are no
    more), a single world once the stock ran out (every card is then known)."""

    name = "expert_ab"
    max_games = 2
    default_budget = 30

    def endgame_worlds(self) -> int:
        return self.budget

    def phase_a(self, know: Knowledge, actions: list[int], legal: list[int], preferred: int) -> int:
        return preferred


class PimcBot(SearchBot):
    """Perfect-Information Monte Carlo: ``budget`` sampled worlds consistent with the view;
    every legal action (closing and exchanging included) is valued in each world by an
    ``expert`` rollout that switches to exact alpha-beta once the stock is closed or
    exhausted; the best mean game-point outcome is played. Phase B is ``expert_ab``'s search."""

    name = "pimc"
    max_games = 1
    default_budget = 16

    def phase_a(self, know: Knowledge, actions: list[int], legal: list[int], preferred: int) -> int:
        games = worlds(know, self.rng, self.effective_budget())
        return best_action(pimc_values(know, actions, games, rollout_values, self.deadline), preferred)


class IsmctsBot(SearchBot):
    """Information Set MCTS (``botkit.ismcts``): ``budget`` iterations, each in a fresh sampled
    world, ``expert`` rollouts and the exact endgame; Phase B is ``expert_ab``'s search."""

    name = "ismcts"
    max_games = 1
    default_budget = 600
    exploration = 0.7
    exact_cards = 4  # rollouts hand over to the exact solver at this many cards a hand

    def phase_a(self, know: Knowledge, actions: list[int], legal: list[int], preferred: int) -> int:
        root = ismcts.prune(legal, know.situation.total(know.situation.seat), True)
        visits = ismcts.search(know, root, self.rng, self.effective_budget(), self.exploration,
                               self.exact_cards, self.deadline)
        return best_action({a: float(n) for a, n in visits.items()}, preferred)
