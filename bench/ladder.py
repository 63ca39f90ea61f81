"""Proof of strength of the reference-bot ladder (bots/LADDER.md): duplicate deals, fixed seeds.

Every match-up plays pairs of matches with the same seed and the seats swapped; every deal
is played with both seatings (``botkit.duel``). The bots are the same classes the bot folders
run, called in this process with ``Match.view`` views. For each match-up it prints A's deal
win share (ties count half), game points per deal (A minus B) and match win share, each with
a 95% interval over duplicate deals or pairs, and the seconds per decision of both bots.

    .venv/bin/python bench/ladder.py                       # the five floors below
    .venv/bin/python bench/ladder.py greedy:random --deals 4000
    .venv/bin/python bench/ladder.py pimc:expert --deals 400 --budget pimc=16 --json out.json

Run one match-up at a time on a shared machine; search bots take ~0.1 s per decision.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# bench/protocol.py would shadow the protocol package that the bots import: drop this folder.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

from arena.engine import Rules  # noqa: E402
from botkit.bots import ExpertABBot, ExpertBot, GreedyBot, IsmctsBot, LadderBot, PimcBot  # noqa: E402
from botkit.duel import Factory, Tally, duel, mean_ci  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
LADDER: dict[str, type[LadderBot]] = {
    "greedy": GreedyBot, "expert": ExpertBot, "expert_ab": ExpertABBot, "pimc": PimcBot, "ismcts": IsmctsBot,
}
FLOORS = {  # the ladder's promise, A vs B -> deal win share floor (bots/LADDER.md)
    ("greedy", "random"): 0.78,
    ("expert", "greedy"): 0.53,
    ("expert_ab", "expert"): 0.52,
    ("pimc", "expert"): 0.53,
    ("ismcts", "expert_ab"): 0.55,
}


def random_bot() -> Callable[[str, int], Any]:
    """bots/random's class, loaded from its file (it is not part of a package)."""
    spec = importlib.util.spec_from_file_location("ladder_random_bot", REPO / "bots" / "random" / "bot.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.RandomBot  # type: ignore[no-any-return]


def factory(name: str, rules: Rules, budgets: dict[str, int]) -> Factory:
    """A ``(game_id, seat) -> bot`` maker for a ladder name."""
    if name == "random":
        return random_bot()
    cls = LADDER[name]
    budget = budgets.get(name)
    return lambda game_id, seat: cls(game_id, seat, rules=rules, budget=budget)


def report(a: str, b: str, tally: Tally, seconds: float) -> dict[str, Any]:
    """The figures of one match-up, printed and returned."""
    win, win_ci = mean_ci(tally.deal_wins)
    pts, pts_ci = mean_ci(tally.deal_points)
    match, match_ci = mean_ci(tally.match_wins)
    floor = FLOORS.get((a, b))
    verdict = "" if floor is None else ("  floor %.0f%%: %s" % (100 * floor, "met" if win >= floor else "NOT MET"))
    print(f"{a} vs {b}: {len(tally.deal_wins)} duplicate deals ({2 * len(tally.deal_wins)} hands, "
          f"{tally.ties} tied), {len(tally.match_wins)} match pairs, {seconds:.1f} s")
    print(f"  deal win share   {100 * win:5.1f}% ± {100 * win_ci:.1f}{verdict}")
    print(f"  game points/deal {pts:+.3f} ± {pts_ci:.3f}")
    print(f"  match win share  {100 * match:5.1f}% ± {100 * match_ci:.1f}")
    think = {}
    for name, times in sorted(tally.think.items()):
        times = sorted(times)
        mean = sum(times) / len(times)
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        think[name] = {"decisions": len(times), "mean_s": mean, "p99_s": p99, "max_s": times[-1]}
        print(f"  {name:10s} s/decision: mean {mean:.5f}  p99 {p99:.4f}  max {times[-1]:.4f}  ({len(times)} decisions)")
    return {
        "a": a, "b": b, "deals": len(tally.deal_wins), "ties": tally.ties, "pairs": len(tally.match_wins),
        "deal_win_share": [win, win_ci], "game_points_per_deal": [pts, pts_ci],
        "match_win_share": [match, match_ci], "floor": floor, "think": think, "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("matchups", nargs="*", help="A:B pairs (default: the five floors of FLOORS)")
    parser.add_argument("--deals", type=int, default=400, help="duplicate deals per match-up (default 400)")
    parser.add_argument("--seed", default="ladder", help="base seed of the match pairs")
    parser.add_argument("--budget", action="append", default=[], metavar="NAME=N",
                        help="search budget of a bot (worlds or iterations); repeatable")
    parser.add_argument("--exploration", type=float, help="override ismcts's UCB exploration constant")
    parser.add_argument("--exact-cards", type=int, help="override ismcts's hand-over to the exact solver")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    budgets = {name: int(n) for name, n in (item.split("=", 1) for item in args.budget)}
    if args.exploration is not None:
        IsmctsBot.exploration = args.exploration
    if args.exact_cards is not None:
        IsmctsBot.exact_cards = args.exact_cards
    pairs = [tuple(m.split(":", 1)) for m in args.matchups] if args.matchups else list(FLOORS)
    rules = Rules()
    out = []
    for a, b in pairs:
        start = time.monotonic()
        tally = duel(factory(a, rules, budgets), factory(b, rules, budgets), (a, b), deals=args.deals,
                     seed=args.seed, rules=rules)
        out.append(report(a, b, tally, time.monotonic() - start))
        sys.stdout.flush()
    if args.json:
        args.json.write_text(json.dumps({"budgets": budgets, "seed": args.seed, "matchups": out}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
