"""Shared logic of the reference bots in ``bots/`` (greedy, expert, expert_ab, pimc, ismcts).

Layers, bottom up:

- ``cards``: card bitmasks over the engine's card indices;
- ``knowledge``: what a seat knows (card counting from its view) and sampling of worlds
  consistent with it;
- ``policies``: the greedy and expert policies on a ``Situation``;
- ``endgame``: exact alpha-beta on game points in Phase B; ``pimc`` and ``ismcts``;
- ``bots``: the SDK bot classes, usable in-process (``act(view, legal)``) and by ``run``.

Search runs on the engine's own rules core, ``arena.engine.core.Core`` (int actions, card
bitmasks; see its fast interface). Bots only ever read their own view; a searched world is a
``Core`` filled from the view plus sampled guesses.
"""
