"""The tournament file's checks (unit)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.engine.records import SprtSettings
from arena.tournament import BotEntry, ConfigError, TournamentConfig, load_config
from results.store import Store

from .stores import BOTS

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
        ('pairs_per_pairing = 0\nbots = ["a", "b"]', "'pairs_per_pairing' must be a whole number from 1 to"),
        ('seed = "x"\nbots = ["a", "b"]', "'seed' must be a whole number"),
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


WRONG_VALUES = ["5", "5.5", "true", "[1]", "{a = 1}", '"x"', "-1", "0"]
TOP_LEVEL = ["name", "format", "pairs_per_pairing", "seed", "deals", "disk_mb", "concurrency", "output", "fault_policy", "sandbox",
             "fresh", "rules", "time_control", "cluster", "registry", "allow_unvalidated"]


def _accepted(key: str, value: str) -> bool:
    """The few (key, value) combinations above that are valid settings."""
    return (key, value) in {("name", '"x"'), ("pairs_per_pairing", "5"), ("seed", "5"), ("seed", "0"),
                            ("concurrency", "5"), ("disk_mb", "5"), ("output", '"x"'), ("fresh", "true"), ("registry", '"x"'),
                            ("allow_unvalidated", "true")} or (key == "registry" and value == "0")


@pytest.mark.parametrize("value", WRONG_VALUES)
@pytest.mark.parametrize("key", TOP_LEVEL)
def test_a_wrong_type_or_value_gives_one_line_naming_the_key(tmp_path: Path, key: str, value: str) -> None:
    bots = f'[[bots]]\npath = "{ROOT / "bots/random"}"\n[[bots]]\npath = "{ROOT / "bots/greedy"}"\n'
    path = _write(tmp_path, f"{key} = {value}\n{bots}")
    if _accepted(key, value):
        load_config(path)
        return
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    assert key in message or (key == "rules" and "rule option" in message), message


@pytest.mark.parametrize("key", ["time_limit_ms", "bank_ms", "handshake_ms"])
@pytest.mark.parametrize("value", ["0", "-5", '"100"', "1.5", "true", "99999999999"])
def test_time_control_values_are_checked_by_key(tmp_path: Path, key: str, value: str) -> None:
    path = _write(tmp_path, f'bots = ["a", "b"]\n[time_control]\n{key} = {value}\n')
    if key == "bank_ms" and value == "0":
        assert load_config(path).time_control.bank_ms == 0  # no bank: every decision within the limit
        return
    with pytest.raises(ConfigError, match=rf"\[time_control\] '{key}' must be a whole number from"):
        load_config(path)


def test_settings_built_in_code_are_checked_too() -> None:
    from arena.tournament import BotEntry, TournamentConfig

    with pytest.raises(ConfigError, match="'concurrency' must be a whole number from 1"):
        TournamentConfig(bots=(BotEntry(Path("a")), BotEntry(Path("b"))), concurrency=0)
    with pytest.raises(ConfigError, match="'cluster' must be a scheduler address"):
        TournamentConfig(bots=(BotEntry(Path("a")), BotEntry(Path("b"))), cluster="nowhere")


def test_the_settings_the_store_keeps_are_the_config_as_json_with_what_results_read_typed(tmp_path: Path) -> None:
    config = TournamentConfig(bots=(BotEntry(tmp_path / "a"), BotEntry(tmp_path / "b")), pairs_per_pairing=40,
                              profile="santase", rule_options=(("match_target", 7),),
                              sprt=SprtSettings(elo0=1.0, elo1=4.0, alpha=0.1, beta=0.2))
    settings = config.settings()
    assert settings.document == config.to_dict() and settings.rules == config.rules
    assert settings.pairs_per_pairing == 40 and settings.sprt == config.sprt
    with Store(tmp_path / "a.sqlite", create=True) as store:
        store.create_tournament("t", 1, settings, BOTS, [])
        stored = store.tournament()
        text = store.db.execute("SELECT config_json FROM tournaments").fetchone()[0]
    assert text == json.dumps(config.to_dict(), sort_keys=True)  # the stored form is unchanged
    assert stored.settings == settings and TournamentConfig.from_dict(stored.settings.document) == config
