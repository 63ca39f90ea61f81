"""The ``arena`` parser: the command -> module table is true, and a known command imports only
its own module (none of numpy, starlette, jinja2 or the other commands' modules).

The import checks run in a fresh interpreter: the test process has imported everything long
before (as in tests/arena/test_import_weight.py).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import arena.commands
from arena.cli import COMMAND_MODULES, COMMANDS, build_parser

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "starlette", "jinja2", "zmq", "results.bradley_terry", "results.leaderboard",
         *(m for m in COMMAND_MODULES if m != "arena.commands.tournament"))


def registered_by(module: str) -> list[str]:
    """The subcommands ``module``'s register() adds, in order."""
    sub = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(module).register(sub)
    return list(sub.choices)


def test_each_command_is_registered_by_the_module_the_table_names() -> None:
    assert {name: module for module in COMMAND_MODULES for name in registered_by(module)} == COMMANDS


def test_every_command_module_is_in_the_table() -> None:
    with_register = {f"arena.commands.{info.name}" for info in pkgutil.iter_modules(arena.commands.__path__)
                     if hasattr(importlib.import_module(f"arena.commands.{info.name}"), "register")}
    assert with_register == set(COMMAND_MODULES)


def test_the_full_parser_lists_every_command_in_table_order() -> None:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(COMMANDS)
    shown = subprocess.run([sys.executable, "-m", "arena.cli", "--help"], cwd=REPO, capture_output=True, text=True,
                           timeout=60)
    assert shown.returncode == 0, shown.stderr
    listed = [line.split()[0] for line in shown.stdout.splitlines() if line.startswith("    ") and line[4] != " "]
    assert listed == list(COMMANDS)


def test_an_unknown_command_is_refused_with_the_whole_list() -> None:
    done = subprocess.run([sys.executable, "-m", "arena.cli", "nosuch"], cwd=REPO, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "invalid choice: 'nosuch'" in done.stderr and "'sprt'" in done.stderr


def heavy_after(statement: str) -> set[str]:
    """The HEAVY modules a fresh interpreter holds after running ``statement``."""
    probe = f"{statement}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_parsing_arena_run_imports_no_other_command_and_no_heavy_library() -> None:
    argv = ["run", "--bots", "a", "b", "--max-games", "4"]
    assert heavy_after(f"from arena import cli\ncli.build_parser(cli._command_in({argv!r})).parse_args({argv!r})") == set()


def test_the_probe_sees_what_the_full_parser_and_the_leaderboard_import() -> None:
    # The same probe finds them where they belong, so the empty set above means something.
    assert set(COMMAND_MODULES) - {"arena.commands.tournament"} <= heavy_after("from arena import cli\ncli.build_parser()")
    assert {"numpy", "results.bradley_terry"} <= heavy_after("import results.leaderboard")


# The rankings' numpy on OpenBLAS: how many threads the process has once ``arena leaderboard`` ran.
_THREADS_AFTER_LEADERBOARD = """
import os, sys
from arena.cli import main
assert main(["leaderboard", sys.argv[1], "--bootstrap", "20"]) == 0
print(len(os.listdir("/proc/self/task")), file=sys.stderr)
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc (Linux)")
@pytest.mark.skipif((__import__("os").cpu_count() or 1) < 2, reason="OpenBLAS starts no thread on one CPU")
def test_the_rankings_numpy_computes_on_one_thread_unless_the_user_sets_openblas_threads(tmp_path: Path) -> None:
    import os

    from arena.engine.deals import Deals
    from tests.tournament.stores import make_store

    make_store(tmp_path / "arena.sqlite", Deals.public(3))
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}

    def threads(**extra: str) -> int:
        done = subprocess.run([sys.executable, "-c", _THREADS_AFTER_LEADERBOARD, str(tmp_path)], cwd=REPO,
                              env={**env, **extra}, capture_output=True, text=True, check=True)
        return int(done.stderr.split()[-1])

    assert threads() == 1
    assert threads(OPENBLAS_NUM_THREADS="2") == 2  # the user's setting is kept
