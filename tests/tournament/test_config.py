"""The tournament file's checks (unit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.tournament import ConfigError, load_config

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_tournament_file_resolves_paths_against_its_folder(tmp_path: Path) -> None:
    path = _write(tmp_path, f'''
name = "cup"
format = "gauntlet"
pairs_per_pairing = 3
seed = 11
output = "out"
[rules]
profile = "santase"
match_target = 5
[time_control]
time_limit_ms = 200
[[bots]]
path = "{ROOT / 'bots/random'}"
name = "r1"
[[bots]]
path = "../{tmp_path.name}/rel"
''')
    config = load_config(path)
    assert config.output == tmp_path / "out" and config.bots[1].path == tmp_path / "rel"
    assert config.rules.match_target == 5 and config.rules.auto_declare  # santase plus an override
    assert config.time_control.time_limit_ms == 200 and config.time_control.bank_ms == 10_000
    assert config.bots[0].label == "r1" and config.pairs_per_pairing == 3 and str(config.format) == "gauntlet"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name = ", "not valid TOML"),
        ("bots = []", "at least two"),
        ('colour = "red"\nbots = ["a", "b"]', "unknown key 'colour'"),
        ('format = "swiss"\nbots = ["a", "b"]', "'format' must be one of"),
        ('pairs_per_pairing = 0\nbots = ["a", "b"]', "'pairs_per_pairing' must be a positive integer"),
        ('seed = "x"\nbots = ["a", "b"]', "'seed' must be an integer"),
        ('max_games = 0\nbots = ["a", "b"]', "'max_games' must be a positive integer"),
        ('bots = ["a", "b"]\n[rules]\nmust_head = 3', "must_head"),
        ('bots = ["a", "b"]\n[time_control]\nlimit = 3', "unknown key 'limit'"),
        ('bots = [{path = "a", colour = 1}, "b"]', "bots[0]: unknown key 'colour'"),
    ],
)
def test_bad_tournament_files_get_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")) as info:
        load_config(_write(tmp_path, text))
    assert str(tmp_path / "t.toml") in str(info.value)


def test_unreadable_tournament_files(tmp_path: Path) -> None:
    binary = tmp_path / "t.toml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(binary)
    with pytest.raises(ConfigError, match="no such tournament file"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path)
