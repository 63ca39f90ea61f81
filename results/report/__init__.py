"""The HTML report: a static site (``arena report``) and a live server (``arena serve``).

Pages: leaderboard with rating intervals and rating history, crosstable, matches, one page
per bot (results by opponent, behaviour, think times, faults) and one replay page per match.
"""

from .site import Site, load_site, write_report

__all__ = ["Site", "load_site", "write_report"]
