"""A run without a progress bar never imports tqdm; a shown bar is tqdm's, and log lines for
the terminal still reach stderr either way.

Fresh interpreters: the test process itself imported tqdm long before.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]


def run(code: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_a_hidden_bar_imports_no_tqdm_and_log_lines_still_reach_stderr() -> None:
    done = run("import sys, arena.runner, arena.logsetup\n"
               "from arena.progress import progress_bar, write\n"
               "bar = progress_bar(4, show=False, desc='t', unit='match')\n"
               "bar.update(2); bar.set_postfix_str('leader x', refresh=False); bar.close()\n"
               "write('a log line')\n"
               "print('tqdm' in sys.modules)")
    assert done.stdout.split() == ["False"]
    assert done.stderr == "a log line\n"


def test_a_shown_bar_is_tqdm_and_log_lines_go_above_it() -> None:
    done = run("import sys\n"
               "from arena.progress import progress_bar, write\n"
               "bar = progress_bar(4, show=True, desc='t', unit='match')\n"
               "write('a log line'); bar.update(2); bar.close()\n"
               "print(type(bar).__module__.split('.')[0])")
    assert done.stdout.split() == ["tqdm"]
    assert "a log line\n" in done.stderr and "2/4" in done.stderr


def test_no_terminal_means_no_bar_unless_asked() -> None:
    done = run("from arena.progress import progress_bar\n"
               "print(type(progress_bar(4, show=None, desc='t', unit='match')).__name__)")  # stderr is a pipe here
    assert done.stdout.split() == ["_Hidden"]
