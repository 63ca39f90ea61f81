"""The one log failure that still voids a match: the arena's copier itself failing on a bot's
pipe. It then closes the pipe, so the bot's next write fails (its play is touched): a
``harness`` fault, never charged. A full log volume is not that: the log is dropped, the pipe
drained on, and the match stands (``tests/tournament/test_log_volume.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.botproc import load_manifest, logsink
from arena.engine.records import FaultKind
from arena.matchplay import MatchSettings, SessionPool, play_match

from .conftest import BOTFIXTURES

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def test_a_failing_log_copier_voids_the_match_and_charges_nobody(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    real_write = logsink.LogStream._write

    def failing(self: logsink.LogStream, data: bytes) -> None:
        if self.path.name == "stderr.log" and self.path.parent.name.startswith("chatty-"):
            raise RuntimeError("copier bug")  # caught by the sink thread, which abandons the stream
        real_write(self, data)

    monkeypatch.setattr(logsink.LogStream, "_write", failing)
    chatty, random_bot = load_manifest(BOTFIXTURES / "chatty"), load_manifest(ROOT / "bots/random")
    with SessionPool(tmp_path, MatchSettings()) as pool:
        outcome = play_match(pool, (chatty, random_bot), "copier-1", 1)
    harness = [f for f in outcome.faults if f.kind is FaultKind.HARNESS]
    assert outcome.void and outcome.winner is None
    assert harness and "log copier failed" in harness[0].detail and harness[0].seat is None
