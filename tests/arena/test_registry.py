"""The bot registry: submit, resubmit unchanged, change with and without a new version, listing,
resolving names for tournaments, and clear errors that write nothing for broken folders."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from arena.botproc import ManifestError, fingerprint
from arena.cli import main
from arena.clock import TimeControl
from arena.registry import ENTRY_FILE, RegistryError, default_registry, entries, is_validated, resolve
from arena.submission import ValidationFailed, submit
from arena.validation import Settings

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
FAST = Settings(time_control=TimeControl(time_limit_ms=1000, bank_ms=1000, handshake_ms=10_000))
LIMITS = ["--time-limit-ms", "1000", "--bank-ms", "1000", "--handshake-ms", "10000"]


@pytest.fixture
def bot(tmp_path: Path) -> Path:
    """A copy of bots/random named "mine"."""
    folder = tmp_path / "src" / "mine"
    shutil.copytree(REPO / "bots" / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    toml = (folder / "bot.toml").read_text().replace('name = "random"', 'name = "mine"')
    (folder / "bot.toml").write_text(toml)
    return folder


def set_version(folder: Path, version: str) -> None:
    toml = folder / "bot.toml"
    lines = [f'version = "{version}"' if line.startswith("version =") else line
             for line in toml.read_text().splitlines()]
    toml.write_text("\n".join(lines) + "\n")


def test_submit_resubmit_change_and_bump(bot: Path, tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    first = submit(bot, registry, settings=FAST)
    assert first.status == "added" and first.entry.spec == "mine@1.0" and first.report and first.report.passed
    stored = registry / "mine" / "1.0"
    data = json.loads((stored / ENTRY_FILE).read_text())
    assert data["validated"] is True and data["fingerprint"] == fingerprint(bot)
    assert data["report"]["passed"] is True and data["report"]["steps"][-1]["name"] == "match"
    assert fingerprint(stored / "bot") == fingerprint(bot)

    again = submit(bot, registry, settings=FAST)
    assert again.status == "unchanged" and again.report is None and "nothing to do" in again.message

    (bot / "bot.py").write_text((bot / "bot.py").read_text() + "\n# tweaked\n")
    with pytest.raises(RegistryError, match=r"mine@1.0 is already registered with other files.*new version"):
        submit(bot, registry, settings=FAST)
    assert [e.spec for e in entries(registry)] == ["mine@1.0"]

    set_version(bot, "1.1")
    bumped = submit(bot, registry, settings=FAST)
    assert bumped.status == "added" and bumped.entry.spec == "mine@1.1"
    assert [e.spec for e in entries(registry)] == ["mine@1.0", "mine@1.1"]
    assert resolve("mine", registry) == registry / "mine" / "1.1" / "bot"
    assert resolve("mine@1.0", registry) == stored / "bot"
    assert is_validated(bot, registry) and is_validated(stored / "bot", registry)


def test_resolve_errors_and_version_order(tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    with pytest.raises(RegistryError, match="is empty"):
        resolve("random", registry)
    for version in ("1.9", "1.10", "1.2"):
        entry = registry / "x" / version
        (entry / "bot").mkdir(parents=True)
        (entry / ENTRY_FILE).write_text(json.dumps({"name": "x", "version": version, "fingerprint": "f",
                                                    "validated": True}))
    assert resolve("x", registry) == registry / "x" / "1.10" / "bot"
    with pytest.raises(RegistryError, match=r"no bot 'x@2' .* it holds x@1.2, x@1.9, x@1.10"):
        resolve("x@2", registry)
    with pytest.raises(RegistryError, match="NAME@VERSION"):
        resolve("x@", registry)


def test_is_validated_false_for_unknown_changed_or_broken(bot: Path, tmp_path: Path) -> None:
    assert not is_validated(bot, tmp_path / "empty")
    assert not is_validated(tmp_path / "nowhere", tmp_path / "empty")
    copy = tmp_path / "registry" / "mine" / "1.0"
    shutil.copytree(bot, copy / "bot")
    (copy / ENTRY_FILE).write_text(json.dumps({"name": "mine", "version": "1.0",
                                               "fingerprint": fingerprint(bot), "validated": True}))
    assert is_validated(copy / "bot", tmp_path / "registry") and is_validated(bot, tmp_path / "registry")
    (copy / "bot" / "bot.py").write_text("changed")
    assert not is_validated(copy / "bot", tmp_path / "registry")


def test_a_forged_entry_beside_a_folder_is_refused(bot: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """An entry.json next to a folder named bot, outside the configured registry, claiming
    the folder's own fingerprint: no validation status, and the tournament refuses it."""
    registry = tmp_path / "registry"
    assert submit(bot, registry, settings=FAST).status == "added"  # mine@1.0, the real one
    forged = tmp_path / "forged" / "mine" / "1.0"
    shutil.copytree(bot, forged / "bot")
    (forged / "bot" / "bot.py").write_text((forged / "bot" / "bot.py").read_text() + "\n# changed\n")
    (forged / ENTRY_FILE).write_text(json.dumps({
        "schema": 1, "name": "mine", "version": "1.0", "fingerprint": fingerprint(forged / "bot"),
        "validated": True, "submitted_at": "2026-01-01T00:00:00+00:00", "source": str(bot)}))
    assert is_validated(bot, registry)
    assert not is_validated(forged / "bot", registry)
    assert not is_validated(forged / "bot", tmp_path / "forged" / "elsewhere")
    toml = tmp_path / "t.toml"
    toml.write_text(f'name = "t"\nregistry = "{registry}"\noutput = "{tmp_path / "out"}"\n'
                    f'[[bots]]\npath = "{forged / "bot"}"\n[[bots]]\nregistry = "mine@1.0"\n')
    assert main(["run", str(toml), "--quiet"]) != 0
    err = capsys.readouterr().err
    assert "only validated bots may enter" in err and str(forged / "bot") in err
    assert not (tmp_path / "out" / "arena.sqlite").exists()


def assert_nothing_written(registry: Path) -> None:
    assert not registry.exists(), sorted(registry.rglob("*"))


def test_malformed_manifest_writes_nothing(bot: Path, tmp_path: Path) -> None:
    (bot / "bot.toml").write_text((bot / "bot.toml").read_text().replace('protocol = "1"', "protocol = [1]"))
    with pytest.raises(ManifestError, match="field 'protocol'"):
        submit(bot, tmp_path / "registry", settings=FAST)
    assert_nothing_written(tmp_path / "registry")


def test_missing_command_writes_nothing(bot: Path, tmp_path: Path) -> None:
    toml = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(toml.replace('command = ["{python}", "bot.py"]', 'command = ["bin/mine"]'))
    with pytest.raises(ValidationFailed, match="at step 'command'.*does not exist") as caught:
        submit(bot, tmp_path / "registry", settings=FAST)
    assert caught.value.report.first_failure is not None
    assert_nothing_written(tmp_path / "registry")


def test_non_executable_file_writes_nothing(bot: Path, tmp_path: Path) -> None:
    (bot / "mine.sh").write_text("#!/bin/sh\nexit 0\n")
    toml = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(toml.replace('command = ["{python}", "bot.py"]', 'command = ["./mine.sh"]'))
    with pytest.raises(ValidationFailed, match="not executable"):
        submit(bot, tmp_path / "registry", settings=FAST)
    assert_nothing_written(tmp_path / "registry")


def test_symlink_outside_writes_nothing(bot: Path, tmp_path: Path) -> None:
    os.symlink("/etc/passwd", bot / "passwords")
    with pytest.raises(RegistryError, match="passwords -> /etc/passwd: an absolute symlink"):
        submit(bot, tmp_path / "registry", settings=FAST)
    os.remove(bot / "passwords")
    os.symlink("../../outside", bot / "peek")
    with pytest.raises(RegistryError, match="peek -> ../../outside: the symlink points outside the bot folder"):
        submit(bot, tmp_path / "registry", settings=FAST)
    assert_nothing_written(tmp_path / "registry")


def test_unsafe_name_writes_nothing(bot: Path, tmp_path: Path) -> None:
    toml = (bot / "bot.toml").read_text()
    (bot / "bot.toml").write_text(toml.replace('name = "mine"', 'name = "../mine"'))
    with pytest.raises(RegistryError, match="field 'name'"):
        submit(bot, tmp_path / "registry", settings=FAST)
    assert_nothing_written(tmp_path / "registry")


def test_default_registry_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ARENA_REGISTRY", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_registry() == tmp_path / "data" / "sixty-six-arena" / "registry"
    monkeypatch.setenv("ARENA_REGISTRY", str(tmp_path / "elsewhere"))
    assert default_registry() == tmp_path / "elsewhere"


def test_cli_submit_and_bots(bot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = str(tmp_path / "registry")
    assert main(["bots", "--registry", registry]) == 0
    assert "no bots in the registry" in capsys.readouterr().out
    assert main(["submit", str(bot), "--registry", registry, *LIMITS]) == 0
    assert "registered mine@1.0" in capsys.readouterr().out
    assert main(["submit", str(bot), "--registry", registry, *LIMITS]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert main(["bots", "--registry", registry]) == 0
    out = capsys.readouterr().out
    assert "mine@1.0" in out and fingerprint(bot)[:12] in out and "yes" in out
    assert main(["bots", "--registry", registry, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["spec"] == "mine@1.0"
    (bot / "bot.py").write_text("import sys\nsys.exit(9)\n")
    set_version(bot, "2.0")
    assert main(["submit", str(bot), "--registry", registry, *LIMITS]) == 1
    out = capsys.readouterr().out
    assert "FAIL  start" in out and "not submitted" in out and "nothing was stored" in out
    (bot / "bot.py").write_text("changed again")
    set_version(bot, "1.0")
    assert main(["submit", str(bot), "--registry", registry, *LIMITS]) == 2
    assert "give it a new version" in capsys.readouterr().err
