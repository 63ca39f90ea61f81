"""``mypy --strict`` is clean over the four packages (``[tool.mypy]`` in pyproject.toml).

Runs mypy in process with its incremental cache in the gitignored ``.mypy_cache``, so a
second run checks only what changed.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from mypy import api

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("arena", "protocol", "results", "botkit")


def test_the_configuration_covers_the_four_packages() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["strict"] is True
    assert sorted(config["files"]) == sorted(PACKAGES)


@pytest.mark.timeout(300)  # a cold cache on a loaded machine takes about a minute
def test_mypy_strict_is_clean() -> None:
    stdout, stderr, status = api.run([
        "--config-file", str(REPO / "pyproject.toml"),
        "--cache-dir", str(REPO / ".mypy_cache"),
        "--no-error-summary", "--show-error-codes",
        *(str(REPO / name) for name in PACKAGES),
    ])
    assert status == 0, f"mypy --strict reported errors:\n{stdout}{stderr}"
