"""Operator mistakes get one clear line, lose nothing and change nothing (real `arena` processes)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.tournament.test_e2e import ROOT, arena, rows, write_tournament

pytestmark = pytest.mark.e2e


def _one_clear_line(stderr: str, *words: str) -> None:
    assert "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert all(word in last for word in words), stderr


def test_numbers_are_stored_as_given_and_a_zero_limit_is_refused_naming_the_flag(tmp_path: Path) -> None:
    out = tmp_path / "out"
    base = ["run", "--bots", "bots/random", "bench/bots/echo", "--out", str(out), "--allow-unvalidated", "--quiet"]
    for flag in ("--time-limit-ms", "--handshake-ms", "--concurrency", "--pairs"):
        refused = arena(*base, flag, "0")
        assert refused.returncode == 2
        _one_clear_line(refused.stderr, f"argument {flag}", "must be a whole number from 1")
        assert not out.exists()  # refused before the output folder is made
    ok = arena(*base, "--bank-ms", "0", "--time-limit-ms", "3000", "--pairs", "1", "--seed", "0")
    assert ok.returncode == 0, ok.stderr
    config = json.loads(rows(out / "arena.sqlite", "SELECT config_json FROM tournaments")[0][0])
    assert config["time_control"] == {"time_limit_ms": 3000, "bank_ms": 0, "handshake_ms": 10_000}
    assert config["seed"] == 0


def test_a_wrong_type_in_a_tournament_file_is_one_line_naming_the_key(tmp_path: Path) -> None:
    for extra, key in (("cluster = 5", "'cluster'"), ("format = 5", "'format'"),
                       ("fresh = 1", "'fresh'"), ("[time_control]\nbank_ms = -1", "'bank_ms'")):
        tournament = write_tournament(tmp_path, tmp_path / "out", extra=extra)
        result = arena("run", str(tournament), "--quiet")
        assert result.returncode == 2
        _one_clear_line(result.stderr, str(tournament), key)
        assert not (tmp_path / "out").exists()


def test_a_manifest_with_another_protocol_major_is_refused_at_load(tmp_path: Path) -> None:
    bot = tmp_path / "future"
    shutil.copytree(ROOT / "bots/random", bot, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = bot / "bot.toml"
    manifest.write_text(manifest.read_text().replace('protocol = "1"', 'protocol = "2"'))
    assert 'protocol = "2"' in manifest.read_text()
    result = arena("run", "--bots", str(bot), "bots/random", "--out", str(tmp_path / "out"), "--allow-unvalidated")
    assert result.returncode == 2
    _one_clear_line(result.stderr, str(manifest), "'protocol'", "not supported")
    assert not (tmp_path / "out").exists()


def test_duplicate_labels_are_refused_naming_both_folders(tmp_path: Path) -> None:
    twin = tmp_path / "twin"
    shutil.copytree(ROOT / "bots/random", twin, ignore=shutil.ignore_patterns("__pycache__"))
    result = arena("run", "--bots", "bots/random", str(twin), "--out", str(tmp_path / "out"), "--allow-unvalidated")
    assert result.returncode == 2
    _one_clear_line(result.stderr, str(ROOT / "bots/random"), str(twin), "both labelled 'random'")
    assert not (tmp_path / "out").exists()
    labelled = arena("run", "--bots", "a=bots/random", f"b={twin}", "--out", str(tmp_path / "out"),
                     "--allow-unvalidated", "--quiet", "--pairs", "1")
    assert labelled.returncode == 0, labelled.stderr
    assert [label for (label,) in rows(tmp_path / "out" / "arena.sqlite", "SELECT label FROM entrants")] == ["a", "b"]
