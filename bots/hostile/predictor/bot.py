"""Hostile bot: predicts the deal, as a competitor would if the seeds were public.

The game id names the pair (``p00003h1``: pair 3) or, in ``arena match``, the seed itself
(``match-5``). Public deals derive pair seeds from the tournament seed, so the bot tries
tournament seeds 0..MAX_SEED: a candidate whose deal gives exactly its own visible hand, the
up-card and the dealer is the real one, and then it knows the opponent's cards and the
whole stock, hand after hand. Each prediction goes to stderr as one line::

    predictor: PREDICT game p00003h1 hand 1 tournament-seed 7 opponent 9C,JC,QD,KD,TS,AS

(``tournament-seed -1``: the seed came from the game id). A game where no candidate fits
gets one ``predictor: NO-PREDICTION game ...`` line. It plays like ``random``: uniformly
among the legal actions, declaring exactly at 66 or more.
"""

from __future__ import annotations

import hashlib
import random
import re
import sys
from typing import Any

from arena.engine import Hand, Rules, first_dealer, match_deck
from protocol.client import Bot, run

MAX_SEED = 3000
_PAIR_ID = re.compile(r"p(\d+)h[01]")
_MATCH_ID = re.compile(r"match-(\d+)")


def public_pair_seed(tournament_seed: int, pair_index: int) -> int:
    """The public derivation of a pair's seed from the tournament seed (as published in the source)."""
    text = f"{tournament_seed}:pair:{pair_index}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


class PredictorBot(Bot):
    """Plays random legal moves while predicting every deal it can."""

    name = "predictor"
    version = "1.0"
    max_games = 16

    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(game_id, seat)
        self.rng = random.Random(f"predictor:{game_id}:{seat}")
        self.match_seed: int | None = None
        self.tournament_seed: int | None = None
        self.tried = False
        self.predicted: set[int] = set()

    def act(self, view: dict[str, Any], legal_actions: list[str]) -> str:
        self._predict(view)
        if "declare" in legal_actions:
            if view["totals"][view["seat"]] >= 66:
                return "declare"
            legal_actions = [a for a in legal_actions if a != "declare"] or legal_actions
        return self.rng.choice(legal_actions)

    def _predict(self, view: dict[str, Any]) -> None:
        hand_index = view["match"]["hand_index"]
        if hand_index in self.predicted:
            return
        rules = Rules(**self.rules)
        if self.match_seed is None:
            if self.tried or view["trick_number"] != 1 or len(view["hand"]) != 6:
                return  # search once, on a hand whose whole deal it still holds
            self.tried = True
            self.match_seed, self.tournament_seed = self._search(view, hand_index, rules)
            if self.match_seed is None:
                print(f"predictor: NO-PREDICTION game {self.game_id}: no tournament seed in 0..{MAX_SEED} "
                      f"deals my hand", file=sys.stderr, flush=True)
                return
        self.predicted.add(hand_index)
        deal = Hand.deal(match_deck(self.match_seed, hand_index), view["dealer"], rules)
        opponent = ",".join(deal.view(1 - self.seat)["hand"])
        print(f"predictor: PREDICT game {self.game_id} hand {hand_index} tournament-seed "
              f"{-1 if self.tournament_seed is None else self.tournament_seed} opponent {opponent}",
              file=sys.stderr, flush=True)

    def _search(self, view: dict[str, Any], hand_index: int, rules: Rules) -> tuple[int | None, int | None]:
        """(match seed, tournament seed) of the first candidate that deals exactly this view."""
        by_match = _MATCH_ID.fullmatch(self.game_id)
        if by_match:
            return int(by_match.group(1)), None
        by_pair = _PAIR_ID.fullmatch(self.game_id)
        if not by_pair:
            return None, None
        mine = sorted(view["hand"])
        for candidate in range(MAX_SEED + 1):
            seed = public_pair_seed(candidate, int(by_pair.group(1)))
            if hand_index == 0 and first_dealer(seed, rules) != view["dealer"]:
                continue
            deal = Hand.deal(match_deck(seed, hand_index), view["dealer"], rules)
            if sorted(deal.view(self.seat)["hand"]) == mine and deal.view(self.seat)["up_card"] == view["up_card"]:
                return seed, candidate
        return None, None


if __name__ == "__main__":
    run(PredictorBot)
