"""Faulty bot: on the first decision of each hand plays a card it does not hold (illegal);
otherwise the first legal action (so under the lenient policy the match goes on)."""

from protocol.client import Bot, run

DECK = [rank + suit for suit in "CDHS" for rank in "ATKQJ9"]


class IllegalBot(Bot):
    name, version = "faulty-illegal", "1.0"

    def __init__(self, game_id, seat):
        super().__init__(game_id, seat)
        self.hands_cheated = set()

    def act(self, view, legal_actions):
        hand_index = view["match"]["hand_index"]
        if hand_index not in self.hands_cheated:
            self.hands_cheated.add(hand_index)
            return "play " + next(card for card in DECK if card not in view["hand"])
        return legal_actions[0]


if __name__ == "__main__":
    run(IllegalBot)
