"""docs/rules.md's option and profile tables say exactly what ``arena.engine.Rules`` accepts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from arena.engine import OPTION_DESCRIPTIONS, PROFILES, Rules

RULES_DOC = Path(__file__).resolve().parent.parent / "docs" / "rules.md"
ROW = re.compile(r"^\| `(\w+)` \| (.+?) \| (.+?) \| (.+) \|$")


def section(title: str) -> list[str]:
    text = RULES_DOC.read_text()
    body = text.split(f"\n## {title}\n", 1)[1]
    return body.split("\n## ", 1)[0].splitlines()


def value(text: str) -> Any:
    """A value as the tables write it: `7`, `"random"`, `true`."""
    return json.loads(text.strip().strip("`"))


def option_rows() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in section("Options"):
        match = ROW.match(line)
        if match:
            rows[match.group(1)] = (match.group(2), match.group(3))
    return rows


def test_every_option_is_in_the_table_once() -> None:
    assert sorted(option_rows()) == sorted(OPTION_DESCRIPTIONS)


@pytest.mark.parametrize("name", sorted(OPTION_DESCRIPTIONS))
def test_the_documented_type_and_default_are_the_engines(name: str) -> None:
    kind, default = option_rows()[name]
    assert getattr(Rules(), name) == value(default) and type(getattr(Rules(), name)) is type(value(default))
    if kind == "bool":
        for ok in (True, False):
            Rules(**{name: ok})
        with pytest.raises(ValueError):
            Rules(**{name: 1})
    elif kind.startswith("int, "):
        low, high = map(int, kind.removeprefix("int, ").split("-"))
        Rules(**{name: low})
        Rules(**{name: high})
        for bad in (low - 1, high + 1):
            with pytest.raises(ValueError):
                Rules(**{name: bad})
    else:
        choices = [value(c) for c in kind.split(", ")]
        for choice in choices:
            Rules(**{name: choice})
        with pytest.raises(ValueError):
            Rules(**{name: "not-" + str(choices[0])})


def test_the_profile_table_lists_each_profiles_options() -> None:
    documented = {}
    for line in section("Profiles"):
        match = re.match(r"^\| `(\w+)` \| .+? \| (.+) \|$", line)
        if match:
            pairs = re.findall(r"`(\w+) = ([^`]+)`", match.group(2))
            documented[match.group(1)] = {k: value(v) for k, v in pairs}
    assert documented == PROFILES
