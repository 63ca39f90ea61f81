"""The Bradley-Terry bootstrap's defaults, apart from the fit so that showing them (``arena
leaderboard --help``, every ``arena run``'s parser) does not import numpy."""

DEFAULT_REPLICATES = 1000
DEFAULT_SEED = 1
DEFAULT_TOP_K = 3
