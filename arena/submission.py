"""Submitting a bot to the registry: validate a folder, then store it as ``name@version``.

The write side of ``arena.registry`` (which only reads entries, for tournaments). An
unchanged resubmission is a no-op, and a changed bot needs a new version. Entries are
written atomically: the copy is made in ``<registry>/.incoming`` and renamed into place
under the registry's lock.
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

from arena.botproc import MANIFEST_NAME, fingerprint, load_manifest
from arena.registry import BOT_FOLDER, ENTRY_FILE, Entry, RegistryError, find, registry_root
from arena.validation import Report, Settings, validate
from arena.validation.folder import IGNORED_DIRS, folder_problems

log = logging.getLogger(__name__)

ENTRY_SCHEMA = 1
_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,63}\Z")
_INCOMING = ".incoming"
_LOCK = ".lock"

Validator = Callable[[Path, Settings | None], Report]


class ValidationFailed(RegistryError):
    """``submit`` refused a bot that did not pass ``arena validate``; ``report`` says why."""

    def __init__(self, message: str, report: Report) -> None:
        super().__init__(message)
        self.report = report


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
