"""The runner wired to the results store: how ``arena run``, ``resume`` and ``sprt`` (and the
server's settle phase) play a tournament into its output folder.

The harness never imports ``results``; this edge hands the runner
(``arena.runner.play_tournament``) a ``results.recording.Recording`` on ``OUT/arena.sqlite``.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable

from arena.output import hold_output
from arena.runner import Entrants, RunReport, play_tournament, prepare_entrants
from arena.tournament import TournamentConfig
from results.recording import Recording, StopRule
from results.store import DB_NAME


def run_tournament(config: TournamentConfig, *, stop_rule: StopRule | None = None, progress: bool | None = None,
                   executor_factory: Callable[[], cf.Executor] | None = None, reap_orphans: bool = False,
                   entrants: Entrants | None = None) -> RunReport:
    """Run (or resume) ``config``'s tournament into its output folder until every pair is stored,
    it is stopped, or ``stop_rule`` decides (the other options: ``play_tournament``).

    The bots are checked (``prepare_entrants``) before the folder is made or locked.
    """
    entrants = entrants or prepare_entrants(config)
    with hold_output(config.output, DB_NAME), Recording(config.output / DB_NAME, stop_rule=stop_rule) as results:
        return play_tournament(config, results, progress=progress, executor_factory=executor_factory,
                               reap_orphans=reap_orphans, entrants=entrants)
