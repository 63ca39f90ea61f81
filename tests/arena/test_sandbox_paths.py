"""The sandbox keeps the project visible wherever the checkout lives (a CI clone under /tmp)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.botproc import sandbox

pytestmark = pytest.mark.unit


def _argv(monkeypatch: pytest.MonkeyPatch, repo: Path, run_dir: Path) -> list[str]:
    monkeypatch.setattr(sandbox, "REPO_ROOT", repo)
    return sandbox.bwrap_argv(bwrap="bwrap", bot_dir=repo / "bots/random", workdir=run_dir / "w/work",
                              run_dir=run_dir, expose=[], info_fd=3)


def _binds_after_tmp(argv: list[str]) -> list[str]:
    start = argv.index("/tmp", argv.index("--tmpfs"))
    return [argv[i + 1] for i in range(start, len(argv) - 1) if argv[i] == "--ro-bind"]


def test_a_checkout_under_tmp_is_bound_back_over_the_empty_tmp(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = _argv(monkeypatch, Path("/tmp/ci-clone"), Path("/tmp/ci-clone/arena-out/bots"))
    assert "/tmp/ci-clone" in _binds_after_tmp(argv)
    hide = argv.index("--tmpfs", argv.index("/tmp/ci-clone")) if argv.count("--tmpfs") > 1 else -1
    assert hide > 0 and argv[hide + 1] == "/tmp/ci-clone/arena-out/bots"  # logs of other bots stay hidden


def test_a_checkout_elsewhere_needs_no_extra_binds(monkeypatch: pytest.MonkeyPatch) -> None:
    argv = _argv(monkeypatch, Path("/work/project"), Path("/work/project/arena-out/bots"))
    assert "/work/project" not in _binds_after_tmp(argv)
    assert argv[argv.index("/work/project/arena-out/bots") - 1] == "--tmpfs"
