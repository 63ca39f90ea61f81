"""``arena server run --cluster ADDR``: the ladder's pairs played on a Dask cluster."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arena.botproc import bwrap_status

from .archives import bot_targz
from .conftest import FAST, Server
from .helpers import board, ladder_rows, upload, verdict, wait_for

pytestmark = pytest.mark.integration


def test_the_ladder_plays_on_a_dask_cluster(make_server: Callable[..., Server]) -> None:
    distributed = pytest.importorskip("distributed", reason="pip install 'dask[distributed]' (the test extra has it)")
    sandbox = "bwrap" if bwrap_status()[0] is not None else "fallback"  # 'auto' is refused with --cluster
    server = make_server(*FAST, "--sandbox", sandbox)
    server.add_user("alice")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        server.start("--workers", "1", "--cluster", cluster.scheduler_address)
        with server.client("alice") as alice:
            for name in ("dask-a", "dask-b"):
                assert verdict(alice, upload(alice, bot_targz(name)).json()["id"])["status"] == "accepted"
            wait_for("pairs played on the cluster", lambda: board(alice)["pairs"] >= 2)
        played = cluster.scheduler.task_prefixes.get("play_pair")  # the cluster, not a local pool, played them
        assert played is not None and sum(played.state_counts.values()) >= 2
        server.stop()
    halves = ladder_rows(server.folder, "SELECT pair_index, count(*) FROM matches GROUP BY pair_index")
    assert halves and all(count == 2 for _, count in halves)
