"""Bot manifests (``bot.toml``) and bot fingerprints.

A bot is a folder holding ``bot.toml``::

    name = "random"                      # required, 1-64 characters
    version = "1.0"                      # required, non-empty string
    protocol = "1"                       # required, protocol version (an integer is accepted);
                                         # its major must be the arena's (PROTOCOL.md section 1)
    command = ["{python}", "bot.py"]     # required, non-empty list of strings
    max_games = 16                       # optional, integer >= 1 (default 1): games at once
    description = "..."                  # optional strings: description, author, language
    extra_paths = ["/opt/julia-1.10"]    # optional: more host paths shown read-only
    [env]                                # optional table of extra environment variables
    RANDOM_BOT_SEED = "7"

In ``command``, ``{python}`` stands for the arena's own interpreter (``sys.executable``), and a
relative path (an argument that names an existing file or folder inside the bot folder, or
that starts with ``./`` or ``../``) is resolved against the bot folder, because the bot runs in
an empty working directory of its own. Unknown keys are an error, so typos do not pass silently.

``extra_paths`` names runtimes the bot needs beyond the sandbox's system folders: absolute,
normalised paths below one of :data:`EXTRA_PATH_ROOTS` (not a root itself), shown read-only at
their own path
(``arena validate`` lists them with the whole sandbox view).
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.errors import ArenaError
from protocol.messages import PROTOCOL_VERSION

MANIFEST_NAME = "bot.toml"
PYTHON_PLACEHOLDER = "{python}"
MAX_NAME_LENGTH = 64
_REQUIRED = ("name", "version", "protocol", "command")
_OPTIONAL_STRINGS = ("description", "author", "language")
_ALLOWED = frozenset((*_REQUIRED, "max_games", "env", "extra_paths", *_OPTIONAL_STRINGS))
EXTRA_PATH_ROOTS = ("/opt", "/nix/store", "/gnu/store", "/etc/ssl/certs")
"""Where a manifest's ``extra_paths`` may point: runtimes and public certificates, never the
project, other bots, the results or anyone's home."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
SUPPORTED_PROTOCOL_MAJOR = PROTOCOL_VERSION.split(".")[0]


class ManifestError(ArenaError):
    """A ``bot.toml`` is missing, unreadable or invalid; the message names the file and field."""

    code = "manifest"

    def __init__(self, path: Path, message: str, field: str | None = None) -> None:
        self.path = path
        self.field = field
        where = f"{path}: field {field!r}" if field else str(path)
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True, slots=True)
class Manifest:
    """A validated ``bot.toml`` (protocol/PROTOCOL.md section 7). ``bot_dir`` is absolute;
    ``command`` is as written (see ``argv()``)."""

    bot_dir: Path
    name: str
    version: str
    protocol: str
    command: tuple[str, ...]
    max_games: int = 1
    env: Mapping[str, str] = field(default_factory=lambda: types.MappingProxyType({}),
                                   hash=False)
    description: str = ""
    author: str = ""
    language: str = ""
    extra_paths: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        """The manifest file."""
        return self.bot_dir / MANIFEST_NAME

    def argv(self, python: str | None = None) -> list[str]:
        """The command to execute: ``{python}`` replaced, relative paths made absolute."""
        interpreter = python or sys.executable
        out: list[str] = []
        for arg in self.command:
            if PYTHON_PLACEHOLDER in arg:
                out.append(arg.replace(PYTHON_PLACEHOLDER, interpreter))
            else:
                out.append(_resolve_relative(self.bot_dir, arg))
        return out


def _resolve_relative(bot_dir: Path, arg: str) -> str:
    """``arg`` as an absolute path if it names something in the bot folder, else unchanged."""
    if not arg or arg.startswith("-") or os.path.isabs(arg):
        return arg
    if arg.startswith(("./", "../")) or (bot_dir / arg).exists():
        return os.path.normpath(bot_dir / arg)
    return arg


def load_manifest(bot_dir: Path | str) -> Manifest:
    """Read and check ``<bot_dir>/bot.toml`` (``bot_dir`` may also be the file itself).

    Raises ManifestError naming the file (and the field) for a missing folder or file, bad
    TOML, a missing or mistyped field, or an unknown key.
    """
    path = Path(bot_dir).expanduser().absolute()
    if path.name == MANIFEST_NAME and path.is_file():
        path = path.parent
    toml_path = path / MANIFEST_NAME
    if not path.is_dir():
        raise ManifestError(toml_path, "no such bot folder")
    try:
        with toml_path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ManifestError(toml_path, f"missing: a bot folder needs a {MANIFEST_NAME}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ManifestError(toml_path, f"not valid TOML: {exc}") from None
    except OSError as exc:
        raise ManifestError(toml_path, f"cannot read: {exc.strerror or exc}") from None
    return _check(toml_path, path.resolve(), data)


def _check(toml_path: Path, bot_dir: Path, data: dict[str, Any]) -> Manifest:
    unknown = sorted(set(data) - _ALLOWED)
    if unknown:
        raise ManifestError(toml_path, f"unknown key(s) {', '.join(map(repr, unknown))}; "
                            f"allowed: {', '.join(sorted(_ALLOWED))}", unknown[0])
    for key in _REQUIRED:
        if key not in data:
            raise ManifestError(toml_path, "missing (required)", key)

    def text(key: str, value: Any, *, required: bool = True) -> str:
        if not isinstance(value, str):
            raise ManifestError(toml_path, f"must be a string, got {_tname(value)}", key)
        if required and not value.strip():
            raise ManifestError(toml_path, "must not be empty", key)
        if "\x00" in value:
            raise ManifestError(toml_path, "must not contain NUL", key)
        return value

    protocol = data["protocol"]
    if isinstance(protocol, int) and not isinstance(protocol, bool):
        protocol = str(protocol)
    command = data["command"]
    if not isinstance(command, list) or not command:
        raise ManifestError(toml_path, f"must be a non-empty list of strings, got "
                            f"{_tname(command) if not isinstance(command, list) else 'an empty list'}",
                            "command")
    for i, arg in enumerate(command):
        if not isinstance(arg, str) or "\x00" in arg:
            raise ManifestError(toml_path, f"item {i} must be a string, got {_tname(arg)}",
                                "command")
    if not command[0].strip():
        raise ManifestError(toml_path, "the program (item 0) must not be empty", "command")
    max_games = data.get("max_games", 1)
    if not isinstance(max_games, int) or isinstance(max_games, bool) or max_games < 1:
        raise ManifestError(toml_path, f"must be an integer >= 1, got {max_games!r}",
                            "max_games")
    env = data.get("env", {})
    if not isinstance(env, dict):
        raise ManifestError(toml_path, f"must be a table of strings, got {_tname(env)}", "env")
    for key, value in env.items():
        if not _ENV_NAME.match(key):
            raise ManifestError(toml_path, f"{key!r} is not a valid variable name", "env")
        if not isinstance(value, str) or "\x00" in value:
            raise ManifestError(toml_path, f"{key!r} must be a string, got {_tname(value)}",
                                "env")
    extra_paths = _extra_paths(toml_path, data.get("extra_paths", []))
    name = text("name", data["name"])
    if len(name) > MAX_NAME_LENGTH:
        raise ManifestError(toml_path, f"must be at most {MAX_NAME_LENGTH} characters",
                            "name")
    extras = {k: text(k, data[k], required=False) for k in _OPTIONAL_STRINGS if k in data}
    protocol = text("protocol", protocol)
    if protocol.strip().split(".")[0] != SUPPORTED_PROTOCOL_MAJOR:
        raise ManifestError(toml_path, f"protocol {protocol!r} is not supported: this arena speaks protocol "
                            f"{SUPPORTED_PROTOCOL_MAJOR}.x ({PROTOCOL_VERSION})", "protocol")
    return Manifest(
        bot_dir=bot_dir,
        name=name,
        version=text("version", data["version"]),
        protocol=protocol,
        command=tuple(command),
        max_games=max_games,
        env=types.MappingProxyType(dict(env)),
        extra_paths=extra_paths,
        **extras,
    )


def _extra_paths(toml_path: Path, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ManifestError(toml_path, f"must be a list of absolute paths, got {_tname(value)}",
                            "extra_paths")
    for item in value:
        if not isinstance(item, str) or "\x00" in item:
            raise ManifestError(toml_path, f"items must be strings, got {_tname(item)}",
                                "extra_paths")
        if not item.startswith("/") or os.path.normpath(item) != item:
            raise ManifestError(toml_path, f"{item!r} must be an absolute, normalised path "
                                "(no '..', no trailing '/')", "extra_paths")
        if not any(item.startswith(r + "/") for r in EXTRA_PATH_ROOTS):
            raise ManifestError(toml_path, f"{item!r} is not a folder or file below "
                                f"{', '.join(EXTRA_PATH_ROOTS)}; only runtimes may be shown to a bot",
                                "extra_paths")
    return tuple(value)


def _tname(value: Any) -> str:
    names = {str: "a string", int: "an integer", float: "a float", bool: "a boolean",
             list: "an array", dict: "a table"}
    return names.get(type(value), type(value).__name__)
