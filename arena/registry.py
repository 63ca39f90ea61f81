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
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from arena.botproc import MANIFEST_NAME, fingerprint, load_manifest
from arena.errors import ArenaError
from arena.validation import Report, Settings, validate
from arena.validation.folder import IGNORED_DIRS, folder_problems

log = logging.getLogger(__name__)

REGISTRY_ENV = "ARENA_REGISTRY"
ENTRY_FILE = "entry.json"
BOT_FOLDER = "bot"
ENTRY_SCHEMA = 1
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}\Z")
_INCOMING = ".incoming"
_LOCK = ".lock"

Validator = Callable[[Path, Settings | None], Report]


class RegistryError(ArenaError):
    """A registry operation failed; the message says what and how to fix it."""

    code = "registry"


class ValidationFailed(RegistryError):
    """``submit`` refused a bot that did not pass ``arena validate``; ``report`` says why."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


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


@dataclass(frozen=True, slots=True)
class Submission:
    """What ``submit`` did: ``added`` a new entry, or found it ``unchanged``."""

    status: str
    entry: Entry
    report: Report | None
    message: str


def submit(bot_dir: Path | str, registry: Path | str | None = None, *, settings: Settings | None = None,
           validator: Validator = validate) -> Submission:
    """Validate ``bot_dir`` and store it as ``name@version``; nothing is written unless it passes.

    An entry with the same name, version and fingerprint makes this a no-op (``unchanged``);
    the same name and version with other files is refused (give the bot a new version).
    Raises RegistryError (ValidationFailed, with the report, when validation fails) or
    ManifestError for a bad bot.toml.
    """
    source = Path(bot_dir).expanduser().absolute()
    manifest = load_manifest(source)
    for what, value in (("name", manifest.name), ("version", manifest.version)):
        if not _SAFE.match(value):
            raise RegistryError(f"{manifest.path}: field {what!r}: {value!r} cannot name a registry entry; use "
                                "letters, digits and . _ + - (starting with a letter or digit, at most 64)")
    problems, _, _ = folder_problems(manifest.bot_dir)
    if problems:
        raise RegistryError(f"{manifest.bot_dir} cannot be stored: " + "; ".join(problems))
    root = registry_root(registry)
    print_fp = fingerprint(manifest.bot_dir)
    existing = find(manifest.name, manifest.version, root)
    if existing is not None:
        if existing.fingerprint == print_fp:
            return Submission("unchanged", existing, None,
                              f"{existing.spec} is already registered with the same files "
                              f"(fingerprint {print_fp[:12]}): nothing to do")
        raise RegistryError(
            f"{existing.spec} is already registered with other files (fingerprint {existing.fingerprint[:12]}, "
            f"now {print_fp[:12]}): the bot changed, so give it a new version in {manifest.path} and submit again")
    report = validator(manifest.bot_dir, settings)
    if not report.passed:
        failure = report.first_failure
        where = f" at step {failure.name!r}: {failure.detail.splitlines()[0] if failure.detail else ''}" if failure else ""
        raise ValidationFailed(f"{manifest.name} {manifest.version} did not pass validation{where}; "
                               "nothing was stored", report)
    if fingerprint(manifest.bot_dir) != print_fp:
        raise RegistryError(f"{manifest.bot_dir} changed while it was being validated; submit it again")
    entry = _store(root, manifest.name, manifest.version, print_fp, manifest.bot_dir, report)
    return Submission("added", entry, report, f"registered {entry.spec} (fingerprint {print_fp[:12]}) in {root}")


@contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / _LOCK, "a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _store(root: Path, name: str, version: str, print_fp: str, bot_dir: Path, report: Report) -> Entry:
    """Copy the folder into the registry and write its entry, atomically (rename into place)."""
    with _locked(root):
        final = root / name / version
        if (final / ENTRY_FILE).exists():
            raise RegistryError(f"{name}@{version} was registered meanwhile by another submission")
        incoming = root / _INCOMING
        incoming.mkdir(exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=incoming))
        try:
            shutil.copytree(bot_dir, staging / BOT_FOLDER, symlinks=True,
                            ignore=shutil.ignore_patterns(*IGNORED_DIRS))
            copied = fingerprint(staging / BOT_FOLDER)
            if copied != print_fp:
                raise RegistryError(f"the copy of {bot_dir} differs from the original (fingerprint {copied[:12]} "
                                    f"vs {print_fp[:12]}); nothing was stored")
            data = {
                "schema": ENTRY_SCHEMA, "name": name, "version": version, "fingerprint": print_fp,
                "validated": True, "submitted_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "source": str(bot_dir), "manifest": MANIFEST_NAME, "report": report.to_dict(),
            }
            (staging / ENTRY_FILE).write_text(json.dumps(data, indent=2) + "\n", "utf-8")
            staging.chmod(0o755)
            final.parent.mkdir(exist_ok=True)
            os.rename(staging, final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        log.info("registered %s@%s in %s", name, version, root)
        return Entry.load(final)
