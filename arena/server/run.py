"""``arena server run``: the web application under uvicorn, with the background services."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from arena.server.config import ServerError

log = logging.getLogger(__name__)


def serve(folder: Path, *, host: str, port: int, workers: int | None, cluster: str | None,
          demo: bool = False) -> None:
    """Serve ``folder``'s competition on ``host:port`` until SIGINT or SIGTERM (``demo``: the local
    demo, which may run its bots without bubblewrap, with a loud warning)."""
    try:
        import uvicorn
    except ImportError:
        raise ServerError("the server needs its extra: pip install -e '.[server]'") from None
    from arena.server.db import ServerDB

    db = ServerDB(folder)  # checks the folder
    try:
        if not demo:
            refuse_unsandboxed(db.config().sandbox, cluster=cluster is not None)
    finally:
        db.close()
    from arena.runner import cluster_executor
    from arena.server.app import make_app
    from arena.server.connections import PROXY, LimitedH11Protocol
    from arena.server.ladder import Ladder
    from arena.server.submissions import clear_incoming
    from arena.server.validator import ValidationQueue

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if workers is not None and workers < 1:
        raise ServerError("--workers must be at least 1")
    count = workers or os.cpu_count() or 1
    ladder = Ladder(folder, count, (lambda: cluster_executor(cluster)) if cluster else None)
    validation = ValidationQueue(folder, on_accept=lambda _submission: ladder.wake.set())
    app = make_app(folder, on_submission=validation.wake.set, on_change=ladder.wake.set)  # checks the folder
    clear_incoming(folder)
    config = uvicorn.Config(app, host=host, port=port, log_level="info", access_log=False, proxy_headers=True,
                            forwarded_allow_ips=PROXY, limit_concurrency=256, timeout_keep_alive=5,
                            http=LimitedH11Protocol)
    print(f"serving {folder} on http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    validation.start()
    ladder.start()
    try:
        uvicorn.Server(config).run()
    finally:
        for service in (validation, ladder):
            service.stop()
        for service in (validation, ladder):
            service.join(timeout=10)


def refuse_unsandboxed(sandbox: str, *, cluster: bool = False) -> None:
    """ServerError if the competition's bots could run without a sandbox that its organiser did not
    choose: ``auto`` where bubblewrap cannot run would play strangers' uploads as this server's
    user, seeing the whole machine, and on a cluster each worker machine resolves ``auto`` for
    itself, unseen from here. ``fallback``, chosen at ``init``, is the organiser's say-so."""
    if sandbox != "auto":
        return
    if cluster:
        raise ServerError("with --cluster, every worker machine would resolve the sandbox 'auto' for itself, and one "
                          "without bubblewrap would play the participants' bots WITHOUT a sandbox; make the data "
                          "folder with 'arena server init DIR --sandbox bwrap' (or 'fallback' for trusted bots only)")
    from arena.botproc import bwrap_status

    path, reason = bwrap_status()
    if path is None:
        raise ServerError(f"{reason}: the participants' bots would run WITHOUT a sandbox, as this server's "
                          "user, seeing the whole machine. Install bubblewrap (apt-get install bubblewrap); for a "
                          "private test of trusted bots only, make the data folder with 'arena server init DIR "
                          "--sandbox fallback'")
