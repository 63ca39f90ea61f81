"""Results: the SQLite store, TrueSkill ratings, the leaderboard and exports.

``results`` never imports the harness: the runner writes through ``recording``, handed to it by
the CLI (``arena/sink.py`` says what it needs), and the rest reads what was written.
"""

from .errors import StoreError
from .ratings import RatingEnv, Rating

__all__ = ["Rating", "RatingEnv", "StoreError"]
