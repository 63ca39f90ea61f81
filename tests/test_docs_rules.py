"""The documents' tables say what the code does: docs/rules.md's options and profiles are what
``arena.engine.Rules`` accepts, PROTOCOL.md's canonical order is the order of ``legal_actions``,
and docs/tournaments.md lists every tournament key and every flag of ``arena run``, ``resume``,
``match`` and ``validate``."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from arena.engine import OPTION_DESCRIPTIONS, PROFILES, Hand, Rules

REPO = Path(__file__).resolve().parent.parent
RULES_DOC = REPO / "docs" / "rules.md"
PROTOCOL_DOC = REPO / "protocol" / "PROTOCOL.md"
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


def documented_order() -> tuple[list[str], str, str]:
    """PROTOCOL.md's canonical order: the non-play actions, then the suit and rank orders of plays."""
    text = " ".join(PROTOCOL_DOC.read_text().split("**Canonical order.**", 1)[1].split("\n\n", 1)[0].split())
    head, plays = text.split("then `play`", 1)
    suits = re.search(r"by suit ([CDHS, ]+) and", plays)
    ranks = re.search(r"within a suit ([AKQJT9, ]+)\.", plays)
    assert suits and ranks, text
    return re.findall(r"`([a-z]+(?: [CDHS])?)`", head), suits.group(1).replace(", ", ""), ranks.group(1).replace(", ", "")


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_legal_actions_come_in_protocol_mds_canonical_order(profile: str) -> None:
    actions, suits, ranks = documented_order()
    assert set(actions) == {"exchange", "close", "draw", "declare", "pass"} | {f"meld {s}" for s in "CDHS"}

    def key(action: str) -> tuple[int, int, int]:
        if action.startswith("play "):
            card = action.removeprefix("play ")
            return len(actions), suits.index(card[1]), ranks.index(card[0])
        return actions.index(action), 0, 0

    rng = random.Random(profile)
    for seed in range(60):
        hand = Hand.deal_seeded(seed, dealer=seed % 2, rules=Rules.profile(profile))
        while not hand.is_over:
            legal = hand.legal_actions()
            assert legal == sorted(legal, key=key), legal
            hand.apply(rng.choice(legal))


@pytest.mark.parametrize("command", ["run", "resume", "match", "validate"])
def test_docs_tournaments_lists_every_flag(command: str) -> None:
    import argparse

    from arena.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    flags = {flag for action in sub.choices[command]._actions for flag in action.option_strings} - {"-h", "--help"}
    text = (REPO / "docs" / "tournaments.md").read_text()
    heading = next(line for line in text.splitlines() if line.startswith(f"### `arena {command}"))
    documented = text.split(heading, 1)[1].split("\n### ", 1)[0]
    assert sorted(f for f in flags if f"`{f}" not in documented) == []


def test_docs_tournaments_lists_every_tournament_key() -> None:
    from arena import tournament

    text = (REPO / "docs" / "tournaments.md").read_text()
    keys = tournament._TOP_KEYS | tournament._TIME_KEYS | tournament._BOT_KEYS
    assert sorted(k for k in keys if f"| `{k}` |" not in text) == []
