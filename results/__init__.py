"""Results: the SQLite store, TrueSkill ratings, the leaderboard and exports.

``results`` never imports the runner; it reads what the runner wrote.
"""

from .errors import StoreError
from .ratings import RatingEnv, Rating

__all__ = ["Rating", "RatingEnv", "StoreError"]
