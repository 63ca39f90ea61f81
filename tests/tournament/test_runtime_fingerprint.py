"""The project code bots import from outside their folders is part of what a tournament runs:
it is recorded when the tournament starts, and resume refuses a change, naming the files."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from arena.botproc import view
from arena.botproc.fingerprint import runtime_changes, runtime_files
from arena.commands.run import run_tournament
from arena.tournament import ConfigError, load_config

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the SDK packages, used as the bots' runtime for this test."""
    root = tmp_path / "sdk"
    packages = {}
    for rel, folder in view.sdk_packages().items():
        shutil.copytree(folder, root / rel, ignore=shutil.ignore_patterns("__pycache__"))
        packages[rel] = root / rel
    monkeypatch.setattr(view, "sdk_packages", lambda: packages)
    return root


def test_runtime_files_cover_the_sdk_and_name_changes(sdk: Path) -> None:
    before = runtime_files()
    assert {"botkit/policies.py", "protocol/client.py", "arena/engine/match.py",
            "arena/__init__.py"} <= set(before)
    (sdk / "botkit" / "policies.py").write_text("# edited\n", encoding="utf-8")
    (sdk / "protocol" / "extra.py").write_text("", encoding="utf-8")
    (sdk / "arena" / "engine" / "view.py").unlink()
    assert runtime_changes(before, runtime_files()) == [
        "arena/engine/view.py removed", "botkit/policies.py changed", "protocol/extra.py added"]
    assert runtime_changes(before, before) == []


def test_resume_refuses_a_changed_runtime(sdk: Path, tmp_path: Path) -> None:
    """In-process (the monkeypatched SDK must apply), without the CLI's subreaper: pytest's
    own process must not adopt orphans."""
    out = tmp_path / "out"
    toml = tmp_path / "t.toml"
    toml.write_text(f'name = "cup"\npairs_per_pairing = 1\nconcurrency = 1\nallow_unvalidated = true\n'
                    f'output = "{out}"\n[rules]\nmatch_target = 1\n'
                    f'[[bots]]\npath = "{ROOT / "bots/random"}"\nname = "a"\n'
                    f'[[bots]]\npath = "{ROOT / "bots/random"}"\nname = "b"\n', encoding="utf-8")
    config = load_config(toml)
    assert run_tournament(config, progress=False).complete
    assert run_tournament(config, progress=False).already_finished  # a finished tournament is left as it is
    with sqlite3.connect(out / "arena.sqlite") as db:  # as if killed before it was marked finished
        db.execute("UPDATE tournaments SET finished_at = NULL")
    (sdk / "botkit" / "policies.py").write_text("# edited\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=re.escape(
            "changed since this tournament started (botkit/policies.py changed)")):
        run_tournament(config, progress=False)
