"""Hostile bots against the sandbox view and the disk bound, in arena match and a tournament.

``readhost`` tries to read what a bot must not see and to write outside its working directory;
``diskfill`` fills every writable place. Under bubblewrap every attempt is blocked (a fallback
run is the control: there the same attempts succeed), the attacker is never charged for its
own full disk and nobody else is charged at all, and the other pairs' results equal a run
without the attackers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from .test_e2e import MATCHES, HANDS, ROOT, arena, rows, write_tournament

pytestmark = [pytest.mark.e2e, pytest.mark.requires("bubblewrap")]

HOSTILE = ROOT / "bots" / "hostile"
REPORT = re.compile(r"^(readhost|diskfill): REPORT (.*)$", re.M)
READ_ATTACKS = {"shadow", "root-home", "home", "checkout", "other-bots", "tournament-file", "registry", "sys",
                "opponent-link", "host-proc", "proc-1-root", "proc-1-environ", "ptrace", "environment",
                "privileges", "symlink-escape", "sweep", "inherited-fds"}
WRITE_ATTACKS = {"write-sdk", "write-own-folder", "write-interpreter", "write-etc", "write-usr", "write-root"}
FAST = ["--time-limit-ms", "1000", "--bank-ms", "10000"]


def readhost_copy(tmp_path: Path, targets: dict[str, list[str]]) -> Path:
    """readhost with a targets.json, and symlinks that lead out of its folder."""
    folder = tmp_path / "readhost"
    shutil.copytree(HOSTILE / "readhost", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "targets.json").write_text(json.dumps(targets))
    os.symlink("/", folder / "hostroot")
    os.symlink("../../../../../../..", folder / "up")
    return folder


def report(logs: Path, bot: str) -> dict[str, object]:
    """The bot's REPORT line from its stderr log (there must be exactly one launch)."""
    (log,) = sorted(logs.glob(f"{bot}-*/stderr.log"))
    found = REPORT.findall(log.read_text())
    assert len(found) == 1, log.read_text()[-2000:]
    data: dict[str, object] = json.loads(found[0][1])
    return data


def secrets(tmp_path: Path) -> dict[str, list[str]]:
    """Host files a bot must not reach, made for real so that reading them could succeed."""
    out = tmp_path / "secret-out"
    (out / "bots" / "greedy-1" / "work").mkdir(parents=True)
    for name in ("arena.sqlite", "arena.log", "cup.toml", "bots/greedy-1/stderr.log", "bots/greedy-1/work/notes"):
        (out / name).write_text("secret")
    registry = tmp_path / "registry" / "greedy" / "1.0"
    registry.mkdir(parents=True)
    (registry / "entry.json").write_text("{}")
    return {"results": [str(out / "arena.sqlite"), str(out / "arena.log"), str(out)],
            "tournament-file": [str(out / "cup.toml")],
            "opponent-workdir": [str(out / "bots"), str(out / "bots/greedy-1/work/notes")],
            "registry": [str(tmp_path / "registry"), str(registry / "entry.json")],
            "other-bots": [str(ROOT / "bots" / "random" / "bot.py"), str(ROOT / "bots" / "greedy")]}


def test_readhost_in_arena_match_is_blocked_everywhere(tmp_path: Path) -> None:
    bot = readhost_copy(tmp_path, secrets(tmp_path))
    logs = tmp_path / "logs"
    done = arena("match", str(bot), "bots/random", "--sandbox", "bwrap", "--json", "--run-dir", str(logs), *FAST)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["faults"] == [] and not outcome["forfeit"] and not outcome["void"]  # legal moves throughout
    found = report(logs, "readhost")
    assert READ_ATTACKS | WRITE_ATTACKS | {"results", "opponent-workdir"} <= set(found)
    leaks = {name: f for name, f in found.items() if f["status"] != "BLOCKED"}  # type: ignore[index]
    assert leaks == {}
    assert not (bot / "pwned.txt").exists() and not (ROOT / "botkit" / "pwned.py").exists()


def test_readhost_never_sees_the_opponents_files(tmp_path: Path) -> None:
    """Against diskfill, whose 64 MiB are written before the match starts: readhost looks for
    them in /tmp at its first decision."""
    logs = tmp_path / "logs"
    done = arena("match", str(HOSTILE / "readhost"), str(HOSTILE / "diskfill"), "--sandbox", "bwrap", "--json",
                 "--run-dir", str(logs), *FAST)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["faults"] == []
    assert report(logs, "diskfill")["total_bytes"] == 64 << 20
    (log,) = logs.glob("readhost-*/stderr.log")
    assert "readhost: BLOCKED opponent-tmp: /tmp holds nothing of another bot" in log.read_text()
    assert "LEAK" not in log.read_text()


def test_readhost_in_the_fallback_is_the_control(tmp_path: Path) -> None:
    """Without the sandbox the same attempts really do read the host (writes are not tried)."""
    bot = readhost_copy(tmp_path, secrets(tmp_path))
    logs = tmp_path / "logs"
    done = arena("match", str(bot), "bots/random", "--sandbox", "fallback", "--run-dir", str(logs), *FAST)
    assert done.returncode == 0, done.stderr
    found = report(logs, "readhost")
    leaked = {name for name, f in found.items() if f["status"] == "LEAK"}  # type: ignore[index]
    assert {"checkout", "other-bots", "results", "tournament-file", "registry", "host-proc", "sweep"} <= leaked
    assert not WRITE_ATTACKS & set(found)


@pytest.mark.parametrize("disk_mb", [64, 8])
def test_diskfill_stops_at_the_bound_and_is_nobodys_fault(tmp_path: Path, disk_mb: int) -> None:
    logs = tmp_path / "logs"
    done = arena("match", str(HOSTILE / "diskfill"), "bots/greedy", "--sandbox", "bwrap", "--json",
                 "--run-dir", str(logs), "--disk-mb", str(disk_mb), *FAST)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    assert outcome["faults"] == [] and not outcome["forfeit"] and not outcome["void"]
    found = report(logs, "diskfill")
    places = found["places"]
    assert isinstance(places, dict)
    assert found["total_bytes"] == disk_mb << 20  # everything it could write, and not a byte more
    for place in ("/tmp/work", "/tmp", "/dev/shm"):
        assert "No space left on device" in places[place]["error"], place
    assert places["/dev/shm"]["bytes"] <= 1 << 20
    assert places["/dev"]["bytes"] == 0 and "Read-only file system" in places["/dev"]["error"]


def test_a_tournament_with_the_attackers_finishes_and_the_other_pairs_are_untouched(tmp_path: Path) -> None:
    out = tmp_path / "cup"
    attacker = readhost_copy(tmp_path, {"results": [str(out / "arena.sqlite"), str(out / "arena.log"), str(out)],
                                        "tournament-file": [str(tmp_path / "cup.toml")],
                                        "opponent-workdir": [str(out / "bots")]})
    bots = ["bots/random", "bots/greedy", str(attacker), "bots/hostile/diskfill"]
    toml = write_tournament(tmp_path, out, bots=bots, pairs=1, seed=5, extra='sandbox = "bwrap"')
    done = arena("run", str(toml), "--quiet", "--public-deals", timeout=600)
    assert done.returncode == 0, done.stderr
    db = out / "arena.sqlite"
    assert rows(db, "SELECT count(*) FROM pairs WHERE finished_at IS NULL") == [(0,)]  # it finished
    assert rows(db, "SELECT count(*) FROM faults") == [(0,)]  # nobody charged, the attackers included
    assert rows(db, "SELECT count(*) FROM matches WHERE void = 1 OR forfeit = 1") == [(0,)]
    launches = sorted((out / "bots").glob("readhost-*/stderr.log"))
    assert launches
    for launch in launches:
        text = launch.read_text()
        found = REPORT.findall(text)
        assert found and all(f["status"] == "BLOCKED" for f in json.loads(found[0][1]).values())
        assert "LEAK" not in text and "BLOCKED opponent-tmp" in text
    for launch in (out / "bots").glob("diskfill-*/stderr.log"):
        found = REPORT.findall(launch.read_text())
        assert found and json.loads(found[0][1])["total_bytes"] == 64 << 20

    base = tmp_path / "base"
    baseline = write_tournament(tmp_path, base, bots=bots[:2], pairs=1, seed=5, extra='sandbox = "bwrap"')
    assert arena("run", str(baseline), "--quiet", "--public-deals", timeout=600).returncode == 0
    pair0 = " WHERE pair_index = 0"
    assert rows(db, MATCHES.replace(" ORDER BY", pair0 + " ORDER BY")) == \
        rows(base / "arena.sqlite", MATCHES.replace(" ORDER BY", pair0 + " ORDER BY"))
    assert rows(db, HANDS.replace(" ORDER BY", " WHERE m.pair_index = 0 ORDER BY")) == \
        rows(base / "arena.sqlite", HANDS.replace(" ORDER BY", " WHERE m.pair_index = 0 ORDER BY"))
