"""``arena validate`` with real processes and sockets: every reference bot passes, every faulty
bot fails at the step where its misbehaviour shows, with a clear reason and its evidence.

Clocks are millisecond-scale; every wait in the suite has a deadline (the time control).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from arena.botproc import Limits
from arena.cli import main
from arena.clock import TimeControl
from arena.engine import Rules
from arena.validation import STEPS, Settings, Status, validate
from arena.validation.positions import DECISION_TYPES, EDGE_STATES, INTERLEAVED_DEALS, Position
from tests.requirements import require

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "bots"
FAULTY = BOTS / "faulty"

# A short decision limit makes the search bots scale their budgets down (botkit); the bank
# absorbs a slow decision on a loaded machine. Faulty bots wait out the clock, so it is short.
PASSING = Settings(time_control=TimeControl(time_limit_ms=100, bank_ms=5000, handshake_ms=10_000))
FAILING = Settings(time_control=TimeControl(time_limit_ms=250, bank_ms=250, handshake_ms=3000),
                   limits=Limits(address_space_bytes=512 << 20, file_size_bytes=1 << 20))

# bots/faulty/<folder>: (the step that must fail, words its reason must contain)
EXPECTED = {
    "badshape": ("echo", "malformed"),
    "crash": ("decisions", "crash: bot process ended (exit code 3)"),
    "flood": ("decisions", "output cap"),
    "illegal": ("decisions", "illegal: 'play "),
    "memhog": ("decisions", "out of memory"),
    "notjson": ("echo", "not JSON"),
    "outofturn": ("decisions", "'hello' sent again"),
    "oversize": ("echo", "disconnect"),
    "silent": ("echo", "timeout: no answer"),
    "slow": ("echo", "timeout"),
    "slowhello": ("handshake", "no hello within the start-up limit of 3000 ms"),
    "spawner": ("shutdown", "a bot must stop every process it starts"),
    "staleseq": ("echo", "echoed seq"),
    "wrongversion": ("version", "'2.0'"),
}


def reference_bots() -> list[Path]:
    """Every bot folder under bots/ but the faulty ones."""
    return sorted(p for p in BOTS.iterdir() if p.is_dir() and p.name != "faulty" and (p / "bot.toml").is_file())


def faulty_bots() -> list[Path]:
    return sorted(p for p in FAULTY.iterdir() if (p / "bot.toml").is_file()) if FAULTY.is_dir() else []


def build(bot_dir: Path) -> None:
    """Build a compiled bot (``make``) when its folder has a Makefile; skip without a C toolchain."""
    if (bot_dir / "Makefile").is_file():
        require("c-toolchain")
        done = subprocess.run(["make", "-s", "-C", str(bot_dir)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"make -C {bot_dir} failed:\n{done.stdout}\n{done.stderr}"


# ---------------------------------------------------------------------------- positions


def _is(position: Position) -> bool:
    """Whether ``position`` is the state its name promises (the seat to move is the bot's)."""
    hand = position.hand(Rules())
    seat = hand.to_move
    assert seat is not None
    view = hand.view(seat)
    legal, cards = view["legal_actions"], view["hand"]
    follow = view["lead"] is not None
    restricted = follow and len(legal) < len(cards)
    checks = {
        "lead": not follow and view["trick_number"] == 1 and "close" in legal,
        "follow": follow and view["stock_size"] > 0 and len(legal) == len(cards),
        "pre-draw": legal == ["close", "draw"],
        "final": legal == ["declare", "pass"] and not cards,
        "after-meld": view["pending_meld"] is not None and legal[0] == "declare" and len(legal) == 3,
        "closed-stock": view["closed"] and view["closer"] != seat and restricted,
        "exhausted-stock": not view["closed"] and view["stock_size"] == 0 and restricted,
        "marriage-first-lead": view["trick_number"] == 1 and any(a.startswith("meld ") for a in legal),
        "trump-nine-exchange": "exchange" in legal and "9" + view["trump"] in cards,
        "last-trick": view["trick_number"] == 12 and len(cards) == 1 and not view["closed"] and "declare" in legal,
        "false-declaration": "declare" in legal and hand.total(seat) < 66 and view["tricks_won"][seat] > 0,
    }
    return checks[position.name]


@pytest.mark.parametrize("position", [*DECISION_TYPES, *EDGE_STATES], ids=lambda p: p.name)
def test_each_position_is_what_its_name_says(position: Position) -> None:
    assert _is(position), position


def test_interleaved_deals_start_at_the_deal_with_the_bot_on_lead() -> None:
    for deal in INTERLEAVED_DEALS:
        hand = deal.hand()
        assert not deal.actions() and hand.to_move == 1 - deal.dealer


# ---------------------------------------------------------------------------- bots


@pytest.mark.parametrize("bot_dir", reference_bots(), ids=lambda p: p.name)
def test_reference_bots_pass(bot_dir: Path) -> None:
    build(bot_dir)
    report = validate(bot_dir, PASSING)
    assert report.passed, "\n".join(report.lines())
    assert [s.name for s in report.steps] == [name for name, _ in STEPS]
    assert {c.name for c in report.step("edge-states").checks} == {p.name for p in EDGE_STATES}


@pytest.mark.parametrize("bot_dir", faulty_bots(), ids=lambda p: p.name)
def test_faulty_bots_fail_at_the_right_step(bot_dir: Path) -> None:
    report = validate(bot_dir, FAILING)
    failure = report.first_failure
    assert not report.passed and failure is not None, "\n".join(report.lines())
    step, words = EXPECTED.get(bot_dir.name, (failure.name, ""))
    assert failure.name == step, "\n".join(report.lines())
    assert words in failure.detail, "\n".join(report.lines())
    names = [s.name for s in report.steps]
    assert all(s.status is Status.PASS for s in report.steps[: names.index(step)])
    assert all(s.status is Status.SKIP for s in report.steps[names.index(step) + 1:])
    if step in ("echo", "decisions"):  # the evidence: the request that was sent
        assert failure.sent and failure.sent.startswith("request seq"), failure


def test_staleseq_report_shows_the_stray_reply() -> None:
    if not (FAULTY / "staleseq").is_dir():
        pytest.skip("bots/faulty/staleseq is not there")
    failure = validate(FAULTY / "staleseq", FAILING).first_failure
    assert failure is not None and failure.received and '"seq": 1001' in failure.received.replace('"seq":1001', '"seq": 1001')


# ---------------------------------------------------------------------------- broken folders


def copy_of_random(tmp_path: Path) -> Path:
    folder = tmp_path / "mybot"
    shutil.copytree(BOTS / "random", folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def test_malformed_manifest_names_the_field(tmp_path: Path) -> None:
    folder = copy_of_random(tmp_path)
    text = (folder / "bot.toml").read_text().replace('max_games = 16', 'max_games = "many"')
    (folder / "bot.toml").write_text(text)
    report = validate(folder, FAILING)
    failure = report.first_failure
    assert failure is not None and failure.name == "manifest"
    assert "field 'max_games'" in failure.detail and str(folder / "bot.toml") in failure.detail


def test_bad_toml_and_wrong_protocol(tmp_path: Path) -> None:
    folder = copy_of_random(tmp_path)
    (folder / "bot.toml").write_text('name = "x"\nversion = \n')
    failure = validate(folder, FAILING).first_failure
    assert failure is not None and failure.name == "manifest" and "not valid TOML" in failure.detail
    shutil.copy(BOTS / "random" / "bot.toml", folder / "bot.toml")
    text = (folder / "bot.toml").read_text().replace('protocol = "1"', 'protocol = "2"')
    (folder / "bot.toml").write_text(text)
    failure = validate(folder, FAILING).first_failure
    assert failure is not None and failure.name == "manifest" and "field 'protocol'" in failure.detail


def test_missing_program_and_script(tmp_path: Path) -> None:
    folder = copy_of_random(tmp_path)
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(toml.replace('command = ["{python}", "bot.py"]', 'command = ["./mybot"]'))
    failure = validate(folder, FAILING).first_failure
    assert failure is not None and failure.name == "command" and "does not exist" in failure.detail
    (folder / "bot.toml").write_text(toml.replace('"bot.py"', '"main.py"'))
    failure = validate(folder, FAILING).first_failure
    assert failure is not None and failure.name == "command" and "'main.py' is not in the bot folder" in failure.detail
    (folder / "bot.toml").write_text(toml.replace('command = ["{python}", "bot.py"]', 'command = ["no-such-program-x"]'))
    failure = validate(folder, FAILING).first_failure
    assert failure is not None and failure.name == "command" and "not on the bots' PATH" in failure.detail


def test_non_executable_program(tmp_path: Path) -> None:
    folder = copy_of_random(tmp_path)
    (folder / "run.sh").write_text("#!/bin/sh\nexec python3 bot.py\n")
    toml = (folder / "bot.toml").read_text()
    (folder / "bot.toml").write_text(toml.replace('command = ["{python}", "bot.py"]', 'command = ["./run.sh"]'))
    failure = validate(folder, FAILING).first_failure
    assert failure is not None and failure.name == "command"
    assert "not executable" in failure.detail and "chmod +x" in failure.detail


def test_symlink_pointing_outside(tmp_path: Path) -> None:
    folder = copy_of_random(tmp_path)
    (tmp_path / "secret.txt").write_text("outside")
    os.symlink("../secret.txt", folder / "data.txt")
    failure = validate(folder, FAILING).first_failure
    assert failure is not None and failure.name == "files"
    assert "data.txt -> ../secret.txt" in failure.detail and "outside the bot folder" in failure.detail


def test_files_the_sandbox_user_cannot_read(tmp_path: Path) -> None:
    folder = copy_of_random(tmp_path)
    (folder / "weights.bin").write_bytes(b"secret")
    (folder / "weights.bin").chmod(0o600)
    failure = validate(folder, FAILING).first_failure
    assert failure is not None and failure.name == "files"
    assert "weights.bin: not readable by the bot's user" in failure.detail
    assert f"chmod -R a+rX {folder}" in failure.detail


def test_process_that_exits_before_hello_fails_start(tmp_path: Path) -> None:
    folder = copy_of_random(tmp_path)
    (folder / "bot.py").write_text("import sys\nprint('no arena for me', file=sys.stderr)\nsys.exit(5)\n")
    failure = validate(folder, FAILING).first_failure
    assert failure is not None and failure.name == "start"
    assert "exit code 5" in failure.detail and "no arena for me" in (failure.stderr or "")


# ---------------------------------------------------------------------------- the command


def test_cli_exit_status_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    limits = ["--time-limit-ms", "250", "--bank-ms", "250", "--handshake-ms", "3000"]
    assert main(["validate", str(BOTS / "random"), *limits]) == 0
    out = capsys.readouterr().out
    assert "PASS  match" in out and out.rstrip().splitlines()[-1].startswith("PASSED: 12 passed")
    folder = copy_of_random(tmp_path)
    (folder / "bot.toml").write_text((folder / "bot.toml").read_text().replace('"bot.py"', '"gone.py"'))
    assert main(["validate", str(folder), "--json", *limits]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["passed"] is False and data["failed_step"] == "command"
    assert [s["status"] for s in data["steps"]][:4] == ["pass", "pass", "fail", "skip"]


@pytest.mark.requires("bubblewrap", "root")
def test_report_shows_the_whole_sandbox_view(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runtime = Path("/opt") / f"arena-test-runtime-{os.getpid()}"
    folder = copy_of_random(tmp_path)
    with (folder / "bot.toml").open("a") as fh:
        fh.write(f'extra_paths = ["{runtime}"]\n')
    runtime.mkdir()
    try:
        limits = ["--time-limit-ms", "250", "--bank-ms", "5000", "--sandbox", "bwrap"]
        assert main(["validate", str(folder), "--json", *limits]) == 0
        view = json.loads(capsys.readouterr().out)["sandbox_view"]
        assert main(["validate", str(folder), *limits]) == 0
        text = capsys.readouterr().out
    finally:
        runtime.rmdir()
    assert view["uid"] == 65534 and view["disk_bytes"] == 64 << 20
    mounts = {m["target"]: m for m in view["mounts"]}
    assert mounts[str(folder)]["writable"] is False and mounts[str(runtime)]["purpose"] == "extra path in bot.toml"
    assert mounts["/tmp"]["writable"] is True and mounts["/tmp"]["size_bytes"] + mounts["/dev/shm"]["size_bytes"] == 64 << 20
    assert str(REPO) not in mounts and view["env"]["ARENA_TOKEN"] == "(hidden)"
    assert view["env"]["PYTHONPATH"] == "/arena-sdk"
    assert "sandbox view: uid 65534" in text and f"ro  {runtime}  = {runtime}  (extra path in bot.toml)" in text
    assert "rw  /tmp  tmpfs, at most 63 MiB" in text and "env  ARENA_TOKEN=(hidden)" in text


def test_spawner_child_outlives_it_in_the_fallback_sandbox_and_is_killed() -> None:
    """Without bubblewrap's PID namespace the detached child really survives the bot: the
    shutdown step finds it by the bot's token, fails, and kills it."""
    if not (FAULTY / "spawner").is_dir():
        pytest.skip("bots/faulty/spawner is not there")
    settings = Settings(time_control=FAILING.time_control, sandbox="fallback")
    failure = validate(FAULTY / "spawner", settings).first_failure
    assert failure is not None and failure.name == "shutdown", failure
    assert "outlived its shutdown" in failure.detail and "killed now" in failure.detail
    pids = [int(p) for p in re.findall(r"pid (\d+) \(", failure.detail)]
    assert pids
    for pid in pids:
        assert wait_gone(pid, 5.0), f"pid {pid} still runs"


def wait_gone(pid: int, timeout: float) -> bool:
    """Whether ``pid`` stops being a live spawner process within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                alive = b"spawner" in fh.read()
        except OSError:
            alive = False
        if not alive or time.monotonic() >= deadline:
            return not alive
        time.sleep(0.005)
