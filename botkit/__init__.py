"""Shared logic of the reference bots in ``bots/`` (greedy, expert, expert_ab, pimc, ismcts).

Layers, bottom up:

- ``cards``: card bitmasks over the engine's card indices;
- ``model``: a fast perfect-information model of one hand (int actions), tested to agree
  with ``arena.engine.Hand``;
- ``knowledge``: what a seat knows (card counting from its view) and sampling of worlds
  consistent with it;
- ``policies``: the greedy and expert policies on a ``Situation``;
- ``endgame``: exact alpha-beta on game points in Phase B; ``pimc`` and ``ismcts``;
- ``bots``: the SDK bot classes, usable in-process (``act(view, legal)``) and by ``run``.

Bots only ever read their own view; the model is filled from the view plus sampled guesses.
"""
