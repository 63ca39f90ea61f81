"""Tournament settings: read from a TOML file or built from flags, checked on load.

A tournament file looks like this (every key but ``bots`` is optional)::

    name = "demo"
    format = "round_robin"        # round_robin | double_round_robin | gauntlet
    pairs_per_pairing = 2         # each pair = the same decks twice, seats swapped
    seed = 7
    deals = "secret"              # secret (a key per tournament, revealed after) | public (from seed)
    concurrency = 2               # parallel pairs (default: one per core; half that without cgroups)
    output = "arena-out/demo"     # relative to this file
    fault_policy = "strict"       # strict | lenient
    sandbox = "auto"              # auto | bwrap | fallback
    fresh = false                 # new bot processes for every match
    disk_mb = 64                  # what each bot process may write in all (its /tmp and /dev/shm)
    max_games = 16                # games one bot process plays at once, at most (1 = lock-step)

    [rules]
    profile = "default"           # default | pagat | santase, then any option of docs/rules.md#options
    match_target = 7

    [time_control]
    time_limit_ms = 1000
    bank_ms = 10000
    handshake_ms = 10000

    [[bots]]
    path = "bots/random"          # a bot folder (relative to this file) ...
    [[bots]]
    path = "bots/greedy"
    name = "greedy-v2"            # ... with an optional label; the first bot is the gauntlet's challenger
    [[bots]]
    registry = "expert@1.0"       # ... or a registry entry (NAME or NAME@VERSION; see arena submit)

Top-level ``registry = "DIR"`` names the registry (default: the user's, see ``arena bots``);
``allow_unvalidated = true`` lets bots that never passed ``arena validate`` enter;
``cluster = "tcp://HOST:PORT"`` plays the pairs on a Dask scheduler.

Every number is a whole number within ``LIMITS`` (the same bounds apply to the command-line
flags). ``bank_ms = 0`` means no bank: each decision must fit in ``time_limit_ms``. Two bots
may not share a label: bots whose manifests have the same name need ``name`` labels.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from arena.botproc import SandboxMode
from arena.botproc.sandbox import DEFAULT_DISK_BYTES
from arena.botproc.cgroups import default_concurrency
from arena.clock import TimeControl
from arena.engine import Rules
from arena.errors import ArenaError
from arena.faults import FaultPolicy
from arena.registry import is_validated, resolve
from arena.schedule import Format
from arena.engine.deals import DealMode
from arena.engine.records import SprtSettings, TournamentSettings

DEFAULT_MAX_GAMES = 16  # the most games one bot process plays at once unless a tournament says otherwise

_TOP_KEYS = {"name", "format", "pairs_per_pairing", "seed", "deals", "concurrency", "output", "fault_policy",
             "sandbox", "fresh", "disk_mb", "max_games", "rules", "time_control", "bots", "cluster", "registry", "allow_unvalidated"}
_TIME_KEYS = {"time_limit_ms", "bank_ms", "handshake_ms"}
_BOT_KEYS = {"path", "name", "registry"}

# The accepted range of every numeric setting, inclusive: (lowest, highest, unit).
LIMITS: dict[str, tuple[int, int, str]] = {
    "pairs_per_pairing": (1, 100_000, ""),
    "seed": (0, 2**63 - 1, ""),
    "concurrency": (1, 256, ""),
    "time_limit_ms": (1, 600_000, " ms"),
    "bank_ms": (0, 86_400_000, " ms"),
    "handshake_ms": (1, 600_000, " ms"),
    "disk_mb": (1, 65_536, " MiB"),
    "max_games": (1, 1024, ""),
}
_CLUSTER_ADDRESS = re.compile(r"(?:[a-z][a-z0-9+.-]*://)?[^\s:/]+:(\d{1,5})")


def check_number(key: str, value: object) -> int:
    """``value`` if it is a whole number within ``LIMITS[key]``, else ValueError saying what is allowed."""
    low, high, unit = LIMITS[key]
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise ValueError(f"must be a whole number from {low} to {high}{unit}, not {value!r}")
    return value


def check_cluster(value: object) -> str:
    """``value`` if it looks like a Dask scheduler address (``tcp://HOST:PORT``), else ValueError."""
    match = _CLUSTER_ADDRESS.fullmatch(value) if isinstance(value, str) else None
    if match is None or not 0 < int(match.group(1)) < 65536:
        raise ValueError(f"must be a scheduler address like 'tcp://HOST:PORT', not {value!r}")
    return str(value)


class ConfigError(ArenaError):
    """A tournament file or flag set that cannot be used; the message names the file and key."""

    code = "config"


@dataclass(frozen=True, slots=True)
class BotEntry:
    """One entrant: a bot folder and an optional label."""

    path: Path
    label: str | None = None


@dataclass(frozen=True, slots=True)
class TournamentConfig:
    """Everything that defines a tournament run."""

    bots: tuple[BotEntry, ...]
    name: str = "tournament"
    format: Format = Format.ROUND_ROBIN
    pairs_per_pairing: int = 1
    seed: int = 1
    deals: DealMode = DealMode.SECRET
    concurrency: int = field(default_factory=default_concurrency)
    output: Path = Path("arena-out")
    fault_policy: FaultPolicy = FaultPolicy.STRICT
    sandbox: SandboxMode = SandboxMode.AUTO
    fresh: bool = False
    disk_mb: int = DEFAULT_DISK_BYTES >> 20
    max_games: int = DEFAULT_MAX_GAMES  # a cap on what each bot announces (1 = lock-step)
    profile: str = "default"
    rule_options: tuple[tuple[str, Any], ...] = ()
    time_control: TimeControl = field(default_factory=TimeControl)
    cluster: str | None = None
    registry: Path | None = None
    allow_unvalidated: bool = False
    sprt: SprtSettings | None = None  # a stopping rule (``arena sprt``): the test ends when it decides

    def __post_init__(self) -> None:
        tc = self.time_control
        numbers = {"pairs_per_pairing": self.pairs_per_pairing, "seed": self.seed, "concurrency": self.concurrency,
                   "disk_mb": self.disk_mb, "max_games": self.max_games,
                   "time_limit_ms": tc.time_limit_ms, "bank_ms": tc.bank_ms, "handshake_ms": tc.handshake_ms}
        for key, value in numbers.items():
            _checked("", repr(key), check_number, key, value)
        if self.cluster is not None:
            _checked("", "'cluster'", check_cluster, self.cluster)

    @property
    def rules(self) -> Rules:
        """The rules of every match."""
        return Rules.profile(self.profile, **dict(self.rule_options))

    def schedule_key(self) -> dict[str, Any]:
        """What fixes the schedule and the results: a resumed run must match it exactly."""
        return {
            "name": self.name,
            "format": str(self.format),
            "pairs_per_pairing": self.pairs_per_pairing,
            "seed": self.seed,
            "deals": str(self.deals),
            "rules": self.rules.to_dict(),
            "fault_policy": str(self.fault_policy),
            "time_control": {"time_limit_ms": self.time_control.time_limit_ms, "bank_ms": self.time_control.bank_ms,
                             "handshake_ms": self.time_control.handshake_ms},
            "bots": [{"path": str(b.path), "label": b.label} for b in self.bots],
            "sprt": None if self.sprt is None else asdict(self.sprt),
        }

    def to_dict(self) -> dict[str, Any]:
        """The whole configuration as stored with the tournament (paths absolute)."""
        return {
            **self.schedule_key(),
            "profile": self.profile,
            "rule_options": dict(self.rule_options),
            "concurrency": self.concurrency,
            "output": str(self.output),
            "sandbox": str(self.sandbox),
            "fresh": self.fresh,
            "disk_mb": self.disk_mb,
            "max_games": self.max_games,
            "cluster": self.cluster,
            "registry": None if self.registry is None else str(self.registry),
            "allow_unvalidated": self.allow_unvalidated,
        }

    def settings(self) -> TournamentSettings:
        """The settings as the results store keeps them (``to_dict`` beside what results read of it)."""
        return TournamentSettings.from_dict(self.to_dict())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TournamentConfig:
        """The inverse of ``to_dict`` (what ``arena resume`` reads back)."""
        return cls(
            bots=tuple(BotEntry(Path(b["path"]), b["label"]) for b in data["bots"]),
            name=data["name"],
            format=Format(data["format"]),
            pairs_per_pairing=data["pairs_per_pairing"],
            seed=data["seed"],
            deals=DealMode(data.get("deals", DealMode.PUBLIC)),  # stored before secret deals existed
            concurrency=data["concurrency"],
            output=Path(data["output"]),
            fault_policy=FaultPolicy(data["fault_policy"]),
            sandbox=SandboxMode(data["sandbox"]),
            fresh=data["fresh"],
            disk_mb=data.get("disk_mb", DEFAULT_DISK_BYTES >> 20),  # stored before the disk bound
            max_games=data.get("max_games", 1),  # stored before multiplexed tournaments
            profile=data["profile"],
            rule_options=tuple(sorted(data["rule_options"].items())),
            time_control=TimeControl(**data["time_control"]),
            cluster=data.get("cluster"),
            registry=Path(data["registry"]) if data.get("registry") else None,
            allow_unvalidated=data.get("allow_unvalidated", False),
            sprt=SprtSettings(**data["sprt"]) if data.get("sprt") else None,
        )

    def with_overrides(self, **changes: Any) -> TournamentConfig:
        """A copy with some fields replaced (flags given on the command line)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


def _checked(where: str, name: str, check: Any, *args: Any) -> Any:
    """``check(*args)``, its ValueError turned into a ConfigError: "WHERE: NAME must be ..."."""
    try:
        return check(*args)
    except ValueError as exc:
        raise ConfigError(f"{where + ': ' if where else ''}{name} {exc}") from None


def _expect(where: str, key: str, value: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ConfigError(f"{where}: {key!r} must be {what}, not {value!r}")
    return value


def _choice(where: str, key: str, value: Any, enum: Any) -> Any:
    try:
        return enum(value)
    except ValueError:
        choices = ", ".join(repr(str(m)) for m in enum)
        raise ConfigError(f"{where}: {key!r} must be one of {choices}, not {value!r}") from None


def load_config(path: Path | str) -> TournamentConfig:
    """Read and check a tournament file; ConfigError names the file and the key at fault."""
    path = Path(path)
    where = str(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such tournament file") from None
    except (UnicodeDecodeError, IsADirectoryError, PermissionError) as exc:
        raise ConfigError(f"{where}: cannot read the tournament file ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML ({exc})") from None
    return config_from_dict(data, where=where, base=path.parent)


def config_from_dict(data: dict[str, Any], *, where: str, base: Path) -> TournamentConfig:
    """Check a parsed tournament table; relative paths are taken from ``base``."""
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(_TOP_KEYS))}")
    bots_raw = data.get("bots")
    if not isinstance(bots_raw, list) or len(bots_raw) < 2:
        raise ConfigError(f"{where}: 'bots' must list at least two [[bots]] tables")
    registry_raw = data.get("registry")
    registry = (base / _expect(where, "registry", registry_raw, str, "a folder path")).resolve() if registry_raw else None
    bots = []
    for i, entry in enumerate(bots_raw):
        spot = f"{where}: bots[{i}]"
        if isinstance(entry, str):
            entry = {"path": entry}
        if not isinstance(entry, dict):
            raise ConfigError(f"{spot}: must be a table with 'path' (and optional 'name')")
        extra = sorted(set(entry) - _BOT_KEYS)
        if extra:
            raise ConfigError(f"{spot}: unknown key {extra[0]!r}")
        label = entry.get("name")
        if label is not None:
            _expect(spot, "name", label, str, "a string")
        if ("path" in entry) == ("registry" in entry):
            raise ConfigError(f"{spot}: give either 'path' (a bot folder) or 'registry' (NAME or NAME@VERSION)")
        if "registry" in entry:
            spec = _expect(spot, "registry", entry["registry"], str, "a registry entry like 'greedy@1.0'")
            bots.append(BotEntry(resolve(spec, registry), label))
        else:
            raw_path = _expect(spot, "path", entry["path"], str, "a bot folder path")
            bots.append(BotEntry((base / raw_path).resolve(), label))
    rules_table = data.get("rules", {})
    _expect(where, "rules", rules_table, dict, "a table")
    rules_table = dict(rules_table)
    profile = rules_table.pop("profile", "default")
    time_table = data.get("time_control", {})
    _expect(where, "time_control", time_table, dict, "a table")
    unknown = sorted(set(time_table) - _TIME_KEYS)
    if unknown:
        raise ConfigError(f"{where}: [time_control] unknown key {unknown[0]!r}")
    for key, value in time_table.items():
        _checked(where, f"[time_control] {key!r}", check_number, key, value)
    _expect(where, "[rules] profile", profile, str, "a profile name")
    try:
        Rules.profile(profile, **rules_table)
    except ValueError as exc:
        raise ConfigError(f"{where}: [rules] {exc}") from None
    time_control = TimeControl(**time_table)
    cluster = data.get("cluster")
    if cluster is not None:
        _checked(where, "'cluster'", check_cluster, cluster)
    config = TournamentConfig(
        bots=tuple(bots),
        name=_expect(where, "name", data.get("name", "tournament"), str, "a string"),
        format=_choice(where, "format", data.get("format", "round_robin"), Format),
        pairs_per_pairing=_checked(where, "'pairs_per_pairing'", check_number, "pairs_per_pairing",
                                   data.get("pairs_per_pairing", 1)),
        seed=_checked(where, "'seed'", check_number, "seed", data.get("seed", 1)),
        deals=_choice(where, "deals", data.get("deals", "secret"), DealMode),
        concurrency=_checked(where, "'concurrency'", check_number, "concurrency",
                             data.get("concurrency", default_concurrency())),
        output=(base / _expect(where, "output", data.get("output", "arena-out"), str, "a folder path")).resolve(),
        fault_policy=_choice(where, "fault_policy", data.get("fault_policy", "strict"), FaultPolicy),
        sandbox=_choice(where, "sandbox", data.get("sandbox", "auto"), SandboxMode),
        fresh=_expect(where, "fresh", data.get("fresh", False), bool, "true or false"),
        disk_mb=_checked(where, "'disk_mb'", check_number, "disk_mb", data.get("disk_mb", DEFAULT_DISK_BYTES >> 20)),
        max_games=_checked(where, "'max_games'", check_number, "max_games", data.get("max_games", DEFAULT_MAX_GAMES)),
        profile=profile,
        rule_options=tuple(sorted(rules_table.items())),
        time_control=time_control,
        cluster=cluster,
        registry=registry,
        allow_unvalidated=_expect(where, "allow_unvalidated", data.get("allow_unvalidated", False), bool,
                                  "true or false"),
    )
    return config


def unvalidated_entrants(config: TournamentConfig) -> list[Path]:
    """Entrants that never passed ``arena validate`` as they are now (see ``arena submit``)."""
    return [entry.path for entry in config.bots if not is_validated(entry.path, config.registry)]
