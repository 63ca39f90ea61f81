"""``arena new-bot``: the scaffolded folder passes ``arena validate`` and its own tests as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.cli import main
from arena.clock import TimeControl
from arena.scaffold import FILES
from arena.validation import Settings, validate

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[1]


def test_new_bot_passes_validation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-bot", "my-first_bot", "--dir", str(tmp_path)]) == 0
    folder = tmp_path / "my-first_bot"
    assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)
    assert "class MyFirstBot(Bot)" in (folder / "bot.py").read_text()
    assert 'name = "my-first_bot"' in (folder / "bot.toml").read_text()
    assert f"arena validate {folder}" in capsys.readouterr().out
    report = validate(folder, Settings(time_control=TimeControl(time_limit_ms=1000, bank_ms=2000)))
    assert report.passed, "\n".join(report.lines())
    assert "4 games at once" in report.step("max-games").detail


def test_new_bot_own_tests_pass(tmp_path: Path) -> None:
    assert main(["new-bot", "tester", "--dir", str(tmp_path)]) == 0
    folder = tmp_path / "tester"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x"], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "11 passed" in done.stdout
    assert not (folder / ".pytest_cache").exists()


def test_new_bot_refuses_bad_names_and_existing_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-bot", "9lives", "--dir", str(tmp_path)]) == 2
    assert "not a bot name" in capsys.readouterr().err
    assert main(["new-bot", "ok", "--dir", str(tmp_path)]) == 0
    assert main(["new-bot", "ok", "--dir", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err
