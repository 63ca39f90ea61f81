"""The run's log file gets the records of forked workers (forwarded to the parent) and, once
forwarding stops at the end of the run, the parent's own records directly; nothing the workers
sent before is lost, and a later run forwards again.

A fresh interpreter: logging's set-up is global to a process.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import logging, multiprocessing, sys
from pathlib import Path
from arena.logsetup import setup_logging, stop_forwarding

def workers(run):
    def child(i):
        logging.getLogger("worker").warning("run %d: from worker %d", run, i)
    procs = [multiprocessing.get_context("fork").Process(target=child, args=(i,)) for i in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()

for run in (1, 2):
    setup_logging(Path(sys.argv[1]))
    workers(run)
    stop_forwarding()
    logging.getLogger("parent").warning("run %d: from the parent after the run", run)
"""


def test_worker_and_parent_records_all_reach_the_log_file(tmp_path: Path) -> None:
    log_file = tmp_path / "arena.log"
    done = subprocess.run([sys.executable, "-c", PROBE, str(log_file)], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    lines = [line.split(": ", 1)[1] for line in log_file.read_text(encoding="utf-8").splitlines()]
    worker = [f"run {run}: from worker {i}" for run in (1, 2) for i in range(3)]
    parent = [f"run {run}: from the parent after the run" for run in (1, 2)]
    assert sorted(lines) == sorted(worker + parent)
    console = [f"WARNING worker: {m}" for m in worker] + [f"WARNING parent: {m}" for m in parent]
    assert sorted(done.stderr.splitlines()) == sorted(console)


def test_a_run_log_on_a_full_disk_drops_records_with_one_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's log lives on the results' disk: when that fills up (the run is stopping for it),
    each record the file handler could not write printed a traceback ("--- Logging error ---")
    on the console, burying the one line that says what to do. Now one warning says so."""
    import errno
    import logging

    from arena.logsetup import RunLogHandler

    handler = RunLogHandler(tmp_path / "arena.log", encoding="utf-8")

    def full() -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(handler, "flush", full)  # the records' write reaches the disk on flush
    for n in range(3):
        handler.emit(logging.LogRecord("arena.runner", logging.ERROR, __file__, 1, f"record {n}", None, None))
    monkeypatch.undo()
    handler.close()
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Logging error" not in err, err
    assert err.count("warning: cannot write the log") == 1 and "No space left on device" in err
