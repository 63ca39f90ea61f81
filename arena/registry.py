"""The bot registry: validated bots stored by name, version and fingerprint.

Layout of a registry folder::

    <registry>/<name>/<version>/entry.json   # name, version, fingerprint, validated, report, ...
    <registry>/<name>/<version>/bot/         # a copy of the bot folder (``__pycache__`` left out)

The default registry is ``$ARENA_REGISTRY``, else ``$XDG_DATA_HOME/sixty-six-arena/registry``
(``~/.local/share/...`` when XDG_DATA_HOME is unset). ``submit`` validates a folder and stores
it; an unchanged resubmission is a no-op, and a changed bot needs a new version. Tournaments
name entries as ``NAME@VERSION`` or ``NAME`` (the newest version): ``resolve`` turns that into
the entry's bot folder, and ``is_validated`` tells whether a folder may enter a tournament,
from the registry's own records only.

This module is the registry's read side: loading a tournament file needs it, so it imports
neither the compliance suite nor ZeroMQ. Writing entries (``submit``) is in
``arena.submission``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.botproc import fingerprint, load_manifest
from arena.errors import ArenaError

REGISTRY_ENV = "ARENA_REGISTRY"
ENTRY_FILE = "entry.json"
BOT_FOLDER = "bot"

class RegistryError(ArenaError):
    """A registry operation failed; the message says what and how to fix it."""

    code = "registry"


def default_registry() -> Path:
    """``$ARENA_REGISTRY``, else the registry under the user's data directory."""
    if os.environ.get(REGISTRY_ENV):
        return Path(os.environ[REGISTRY_ENV]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "sixty-six-arena" / "registry"


@dataclass(frozen=True, slots=True)
class Entry:
    """One registered bot: ``bot_dir`` is its stored copy."""

    name: str
    version: str
    fingerprint: str
    validated: bool
    submitted_at: str
    source: str
    path: Path

    @property
    def bot_dir(self) -> Path:
        """The stored copy of the bot folder."""
        return self.path / BOT_FOLDER

    @property
    def spec(self) -> str:
        """``name@version``: how tournament files name this entry."""
        return f"{self.name}@{self.version}"

    @classmethod
    def load(cls, path: Path) -> Entry:
        """Read ``<path>/entry.json``; RegistryError if it is missing or broken."""
        try:
            data = json.loads((path / ENTRY_FILE).read_text("utf-8"))
            return cls(name=str(data["name"]), version=str(data["version"]),
                       fingerprint=str(data["fingerprint"]), validated=data.get("validated") is True,
                       submitted_at=str(data.get("submitted_at", "")), source=str(data.get("source", "")),
                       path=path)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RegistryError(f"broken registry entry {path}: {exc}") from None

    def report(self) -> dict[str, Any] | None:
        """The stored validation report (JSON form)."""
        try:
            report = json.loads((self.path / ENTRY_FILE).read_text("utf-8")).get("report")
        except (OSError, ValueError):
            return None
        return report if isinstance(report, dict) else None


def registry_root(registry: Path | str | None = None) -> Path:
    """The registry folder: ``registry`` if given, else ``default_registry()`` (absolute)."""
    return Path(registry).expanduser().absolute() if registry is not None else default_registry().absolute()


def entries(registry: Path | str | None = None) -> list[Entry]:
    """Every entry, by name then version (oldest first); [] for a registry not made yet."""
    root = registry_root(registry)
    if not root.is_dir():
        return []
    found = [Entry.load(p.parent) for p in sorted(root.glob(f"*/*/{ENTRY_FILE}"))
             if not p.parent.parent.name.startswith(".")]
    return sorted(found, key=lambda e: (e.name, _version_key(e.version), e.submitted_at))


def _version_key(version: str) -> tuple[tuple[int, Any], ...]:
    """Natural order: ``1.10`` after ``1.9``; numbers before words at the same place."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in re.findall(r"\d+|[^\d.]+", version))


def find(name: str, version: str | None = None, registry: Path | str | None = None) -> Entry | None:
    """The entry ``name`` at ``version``, or its newest version when ``version`` is None."""
    matches = [e for e in entries(registry) if e.name == name and (version is None or e.version == version)]
    return matches[-1] if matches else None


def parse_spec(spec: str) -> tuple[str, str | None]:
    """``"random@1.0"`` -> ("random", "1.0"); ``"random"`` -> ("random", None)."""
    name, at, version = spec.strip().partition("@")
    if not name or (at and not version):
        raise RegistryError(f"{spec!r} is not a registry name: use NAME or NAME@VERSION, e.g. random@1.0")
    return name, version or None


def resolve(spec: str, registry: Path | None = None) -> Path:
    """The bot folder of the registry entry ``spec`` (``NAME@VERSION``, or ``NAME`` for its
    newest version). Raises RegistryError naming what the registry holds when there is none."""
    name, version = parse_spec(spec)
    entry = find(name, version, registry)
    if entry is None:
        root = registry_root(registry)
        held = [e.spec for e in entries(registry) if e.name == name] or [e.spec for e in entries(registry)]
        hint = f"; it holds {', '.join(held)}" if held else " (it is empty)"
        raise RegistryError(f"no bot {spec!r} in the registry {root}{hint}; add it with: arena submit BOT_DIR")
    if not entry.bot_dir.is_dir():
        raise RegistryError(f"registry entry {entry.spec} has no bot folder at {entry.bot_dir}")
    return entry.bot_dir


def is_validated(bot_dir: Path | str, registry: Path | None = None) -> bool:
    """Whether ``bot_dir`` passed validation as it is now: ``registry`` (the configured one)
    holds a validated entry for its manifest's ``name@version`` with the fingerprint of its
    files. Only the registry's own records count: an ``entry.json`` beside a folder elsewhere
    says nothing."""
    path = Path(bot_dir).expanduser().absolute()
    try:
        manifest = load_manifest(path)
        entry = find(manifest.name, manifest.version, registry)
        return entry is not None and entry.validated and fingerprint(path) == entry.fingerprint
    except ArenaError:
        return False
