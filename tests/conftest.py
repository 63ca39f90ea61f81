"""Suite-wide hooks: ``@pytest.mark.requires(...)`` skips a test when the machine lacks something."""

from __future__ import annotations

import pytest

from tests.requirements import REQUIREMENTS, STRICT_ENV, require, strict_names


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "requires(*names): the test needs these system packages or features "
                                       f"({', '.join(REQUIREMENTS)}); skipped without them")
    unknown = strict_names() - set(REQUIREMENTS)
    if unknown:
        raise pytest.UsageError(f"{STRICT_ENV}: unknown requirement {sorted(unknown)[0]!r}; "
                                f"known: {', '.join(REQUIREMENTS)}, all")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("requires"):
        require(*mark.args)
