"""The rule options of docs/rules.md#options, checked on construction, and the named profiles."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

_POINTS_2OR3_AT_CLOSE = ("2or3_at_close", "flat2", "flat3")

# name -> (default, allowed values or a type check, description)
_OPTIONS: dict[str, tuple[Any, Any, str]] = {
    "match_target": (7, ("int", 1, 1000), "game points that win the match (R2.4)"),
    "first_dealer": ("random", ("random", 0, 1), "first dealer: seeded choice or a seat (R2.2)"),
    "dealer_rotation": ("alternate", ("alternate", "winner_deals", "loser_deals"),
                        "who deals the next hand (R2.3)"),
    "must_head": (True, bool, "Phase B: a follower must win the trick in the led suit if it can (R6.3)"),
    "must_trump_when_void": (True, bool, "Phase B: a follower void in the led suit must trump (R6.3)"),
    "exchange_min_stock": (2, ("int", 2, 12), "smallest stock at which the trump nine may be exchanged (R8.1f)"),
    "marriage_on_first_lead": (True, bool, "a marriage may be announced before winning a trick, pending (R10.6)"),
    "marriages_in_phase_b": (False, bool, "marriages may be announced once the stock is closed or exhausted (R10.3)"),
    "marriage_on_closing_lead": (True, bool, "the closer may announce a marriage on the lead after closing (R11.6)"),
    "allow_close_before_first_trick": (True, bool, "the non-dealer may close before trick 1 (R11.2)"),
    "allow_close_before_draw": (True, bool, "a trick winner may close before drawing (R11.2b)"),
    "allow_close_before_final_draw": (False, bool, "closing is allowed before the draw after trick 6 (R11.2)"),
    "close_min_stock_after_draw": (2, ("int", 2, 12), "smallest stock at which a leader may close after the draw (R11.2a)"),
    "failed_close_points": ("2or3_at_close", ("2or3_at_close", "2or3_at_end", "flat3", "flat2"),
                            "points to the closer's opponent when a close fails (R13.2a, R13.3a)"),
    "closer_opponent_out_points": ("2or3_at_close", _POINTS_2OR3_AT_CLOSE,
                                   "points when the closer's opponent declares correctly (R13.1b)"),
    "closer_must_declare": (False, bool, "a closer who never declared has failed even at 66 (R13.3a)"),
    "false_declaration_points": ("2or3", ("2or3", "flat2"), "points to the opponent of a false declarer (R13.2b)"),
    "auto_declare": (False, bool, "the engine declares for a seat at 66 or more; declare is never offered (R12.5)"),
    "reject_false_declaration": (False, bool, "declare is offered only at 66 or more (R12.5)"),
    "last_trick_bonus": (10, ("int", 0, 100), "points for winning trick 12 of a never-closed hand (R9)"),
    "tie_rule": ("carry_accumulate", ("carry_accumulate", "carry_max1", "no_carry"),
                 "what a tied hand passes to the next winner (R14)"),
    "schneider_counts_marriages": (True, bool, "valid marriages count toward the loser's 33 (R13.0)"),
}

OPTION_DESCRIPTIONS: dict[str, str] = {name: spec[2] for name, spec in _OPTIONS.items()}

PROFILES: dict[str, dict[str, Any]] = {
    "default": {},
    "pagat": {
        "false_declaration_points": "flat2",
        "closer_opponent_out_points": "flat2",
        "closer_must_declare": True,
        "dealer_rotation": "winner_deals",
        "tie_rule": "no_carry",
    },
    "santase": {
        "match_target": 11,
        "marriage_on_first_lead": False,
        "allow_close_before_first_trick": False,
        "allow_close_before_draw": False,
        "close_min_stock_after_draw": 4,
        "exchange_min_stock": 4,
        "marriages_in_phase_b": True,
        "failed_close_points": "flat3",
        "closer_opponent_out_points": "flat3",
        "auto_declare": True,
        "dealer_rotation": "winner_deals",
        "tie_rule": "no_carry",
    },
}


def _check(name: str, value: Any) -> None:
    """Raise ValueError naming ``name`` unless ``value`` is allowed for it."""
    allowed = _OPTIONS[name][1]
    if allowed is bool:
        ok = isinstance(value, bool)
        expected = "true or false"
    elif isinstance(allowed, tuple) and allowed and allowed[0] == "int":
        low, high = allowed[1], allowed[2]
        ok = isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
        expected = f"an integer from {low} to {high}"
    else:
        ok = any(value == choice and type(value) is type(choice) for choice in allowed)
        expected = "one of " + ", ".join(repr(choice) for choice in allowed)
    if not ok:
        raise ValueError(f"rule option {name!r}: bad value {value!r}; expected {expected}")


_DEFAULTS: tuple[tuple[str, Any], ...] = tuple((name, default) for name, (default, _, _) in _OPTIONS.items())
"""Each option with its default (every hand record asks which options differ)."""


@dataclass(frozen=True, slots=True, init=False)
class Rules:
    """The rule options of one game; ``Rules()`` is the default profile of docs/rules.md.

    Any option of docs/rules.md#options can be given by keyword. An unknown option or a bad
    value raises ``ValueError`` naming it.
    """

    match_target: int
    first_dealer: Any
    dealer_rotation: str
    must_head: bool
    must_trump_when_void: bool
    exchange_min_stock: int
    marriage_on_first_lead: bool
    marriages_in_phase_b: bool
    marriage_on_closing_lead: bool
    allow_close_before_first_trick: bool
    allow_close_before_draw: bool
    allow_close_before_final_draw: bool
    close_min_stock_after_draw: int
    failed_close_points: str
    closer_opponent_out_points: str
    closer_must_declare: bool
    false_declaration_points: str
    auto_declare: bool
    reject_false_declaration: bool
    last_trick_bonus: int
    tie_rule: str
    schneider_counts_marriages: bool

    def __init__(self, **options: Any) -> None:
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise ValueError(f"unknown rule option {unknown[0]!r}; known options: {', '.join(_OPTIONS)}")
        for name, (default, _, _) in _OPTIONS.items():
            value = options.get(name, default)
            _check(name, value)
            object.__setattr__(self, name, value)

    @classmethod
    def profile(cls, name: str, **overrides: Any) -> Rules:
        """The named profile (``default``, ``pagat``, ``santase``), with optional overrides."""
        if name not in PROFILES:
            raise ValueError(f"unknown rules profile {name!r}; known: {', '.join(PROFILES)}")
        return cls(**{**PROFILES[name], **overrides})

    def to_dict(self) -> dict[str, Any]:
        """The options that differ from the default profile (what a hand record stores)."""
        return {name: value for name, default in _DEFAULTS if (value := getattr(self, name)) != default}

    def as_dict(self) -> dict[str, Any]:
        """Every option with its value."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def __repr__(self) -> str:
        options = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"Rules({options})"
