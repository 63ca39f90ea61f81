"""Reference measurement: how fast can a tight pure-Python Sixty-Six engine deal and play
random hands on one core?  A throw-away prototype written from scratch during the project's
research phase, before the engine existed, to estimate the speed a pure-Python engine can
reach -- NOT the project's engine, and not its rules (it simplifies them, see below).
``bench/engine.py --baseline`` times its inline random play beside the engine's public API.
It is kept as it was written, so that the ratio stays comparable over time.

Rules (Sixty-Six, 24 cards, simplified where noted):
  * 24 cards 9 J Q K 10 A (points 0 2 3 4 10 11), 6 cards each, trump card turned,
    talon = 11 face-down + the trump card drawn last.
  * Phase 1 (talon open): any card may be played.  Leader may first exchange the
    trump 9 for the turned trump, may close the talon, may announce a marriage
    (20, 40 in trumps) by leading K or Q of it.  Marriage points are pending until
    the announcer has taken a trick.
  * Phase 2 (talon empty or closed): follow suit and head the trick if possible,
    else trump if possible, else anything.
  * Winner draws first.  66 is declared automatically as soon as it is reached.
  * Game points: 3 if loser took no trick, 2 if loser < 33, else 1.  Last trick
    +10 (talon not closed).  No 66 after 12 tricks: last-trick winner gets 1.
    Closer who fails: opponent gets 2 (simplification).
Usage:
    python bench/proto_engine.py [deals]        # default 200000
"""
import random
import sys
import time

POINTS = [0, 2, 3, 4, 10, 11] * 4          # card c: suit c//6, rank c%6 (9 J Q K T A)
SUIT = [c // 6 for c in range(24)]
NINE, QUEEN, KING = 0, 2, 3


def play_deal(rng, bots=None):
    """Play one deal with uniformly random legal actions (or `bots[p](obs, legal)`).
    Returns (winner, game_points, decisions)."""
    rnd = rng.random
    deck = list(range(24))
    rng.shuffle(deck)
    hands = [deck[0:6], deck[6:12]]
    trump_card = deck[12]
    talon = [trump_card] + deck[13:]        # pop() from the end, trump card last
    trump = SUIT[trump_card]
    pts = [0, 0]
    pend = [0, 0]
    tricks = [0, 0]
    closed_by = -1
    leader = 0
    decisions = 0
    last_winner = 0
    while hands[leader]:
        hand = hands[leader]
        open_talon = talon and closed_by < 0
        # ---- leader's special actions (phase 1 only)
        if open_talon and len(talon) > 2:
            nine = trump * 6 + NINE
            acts = []
            if nine in hand:
                acts.append(-1)             # exchange trump nine
            acts.append(-2)                 # close
            if bots is None:
                # uniform over (cards + specials); specials don't end the turn
                k = int(rnd() * (len(hand) + len(acts)))
                a = acts[k - len(hand)] if k >= len(hand) else None
            else:
                a = bots[leader]((0, hand, trump, len(talon), pts[leader], None, True, None, tricks[leader], pts[1 - leader]), acts + hand)
                a = a if a < 0 else None
                decisions += 1
            if a == -1:
                i = hand.index(nine)
                hand[i] = talon[0]
                talon[0] = nine
            elif a == -2:
                closed_by = leader
                open_talon = False
        # ---- lead a card (possibly announcing a marriage)
        if bots is None:
            lead = hand[int(rnd() * len(hand))]
        else:
            known = hands[1 - leader] if not talon else None   # inferable by card counting
            lead = bots[leader]((1, hand, trump, len(talon), pts[leader], None, open_talon, known, tricks[leader], pts[1 - leader]), hand)
        decisions += 1
        r = lead % 6
        if (r == KING or r == QUEEN) and open_talon:
            partner = lead + 1 if r == QUEEN else lead - 1
            if partner in hand:
                m = 40 if SUIT[lead] == trump else 20
                if tricks[leader]:
                    pts[leader] += m
                    if pts[leader] >= 66:
                        return finish(leader, pts, tricks, closed_by, decisions)
                else:
                    pend[leader] += m
        hand.remove(lead)
        # ---- follower
        f = 1 - leader
        fh = hands[f]
        ls = SUIT[lead]
        if open_talon:
            legal = fh
        else:
            legal = [c for c in fh if SUIT[c] == ls]
            if legal:
                hi = [c for c in legal if c > lead]
                if hi:
                    legal = hi
            else:
                legal = [c for c in fh if SUIT[c] == trump] or fh
        if bots is None:
            fol = legal[int(rnd() * len(legal))]
        else:
            known = hands[leader] if not talon else None
            fol = bots[f]((2, fh, trump, len(talon), pts[f], lead, open_talon, known, tricks[f], pts[leader]), legal)
        decisions += 1
        fh.remove(fol)
        # ---- resolve trick
        if SUIT[fol] == ls:
            w = leader if lead > fol else f
        elif SUIT[fol] == trump:
            w = f
        else:
            w = leader
        pts[w] += POINTS[lead] + POINTS[fol] + pend[w]
        pend[w] = 0
        tricks[w] += 1
        last_winner = w
        if pts[w] >= 66:
            return finish(w, pts, tricks, closed_by, decisions)
        if open_talon and talon:
            hands[w].append(talon.pop())
            hands[1 - w].append(talon.pop())
        leader = w
    # all cards played
    if closed_by >= 0:
        return (1 - closed_by, 2, decisions)
    pts[last_winner] += 10
    if pts[last_winner] >= 66:
        return finish(last_winner, pts, tricks, -1, decisions)
    return (last_winner, 1, decisions)


def finish(w, pts, tricks, closed_by, decisions):
    if closed_by >= 0 and closed_by != w:
        return (w, 2, decisions)            # closer failed (simplified)
    lo = 1 - w
    gp = 3 if tricks[lo] == 0 else (2 if pts[lo] < 33 else 1)
    return (w, gp, decisions)


class RandomBot:
    """What an arena-style in-process bot call costs: method call + obs tuple."""

    def __init__(self, seed):
        self.r = random.Random(seed).random

    def __call__(self, obs, legal):
        return legal[int(self.r() * len(legal))]


def bench(n, bots=None, label=""):
    rng = random.Random(12345)
    wins = [0, 0]
    gp = [0, 0]
    dec = 0
    t = time.perf_counter()
    for _ in range(n):
        w, g, d = play_deal(rng, bots)
        wins[w] += 1
        gp[w] += g
        dec += d
    dt = time.perf_counter() - t
    print(f"{label:38s} {n:8d} deals {dt:6.2f}s  {n/dt:9.0f} deals/s  "
          f"{dec/n:5.2f} decisions/deal  {dec/dt:9.0f} decisions/s  "
          f"p0 wins {wins[0]/n:.3f}  gp/deal {sum(gp)/n:.2f}", flush=True)
    return n / dt


class DictObsRandomBot(RandomBot):
    """Heavier in-process API: builds a fresh dict observation with copied
    hand/legal lists per decision (what a naive arena would hand a bot)."""

    def __call__(self, obs, legal):
        o = {"kind": obs[0], "hand": list(obs[1]), "trump": obs[2],
             "talon": obs[3], "my_points": obs[4], "legal": list(legal)}
        lg = o["legal"]
        return lg[int(self.r() * len(lg))]


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    print(f"python {sys.version.split()[0]}")
    bench(n, None, "inline random (engine limit)")
    bench(n, [RandomBot(1), RandomBot(2)], "RandomBot callbacks (in-process)")
    bench(n, [DictObsRandomBot(1), DictObsRandomBot(2)], "dict-observation callbacks")
