"""``arena new-bot``: scaffold a bot folder that passes ``arena validate`` as it is.

The templates are files beside this module (``*.tmpl``); ``{{name}}`` and ``{{class_name}}``
are filled in.
"""

from __future__ import annotations

import re
from pathlib import Path

from arena.errors import ArenaError

TEMPLATES = Path(__file__).parent / "templates"
FILES = {  # file written -> template
    "bot.toml": "bot.toml.tmpl",
    "bot.py": "bot.py.tmpl",
    "README.md": "README.md.tmpl",
    "test_bot.py": "test_bot.py.tmpl",
    "pytest.ini": "pytest.ini.tmpl",
}
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}\Z")


class ScaffoldError(ArenaError):
    """The bot folder cannot be made (bad name, folder exists)."""

    code = "scaffold"


def class_name(name: str) -> str:
    """``my-first_bot`` -> ``MyFirstBot``."""
    return "".join(part.capitalize() for part in re.split(r"[-_]+", name) if part) or "MyBot"


def new_bot(name: str, parent: Path | str = ".") -> Path:
    """Write a new bot folder ``<parent>/<name>`` from the templates; returns it."""
    if not _NAME.match(name):
        raise ScaffoldError(f"{name!r} is not a bot name: start with a letter; then letters, digits, - or _ "
                            "(at most 64 characters)")
    folder = Path(parent).expanduser() / name
    if folder.exists():
        raise ScaffoldError(f"{folder} already exists; pick another name or --dir")
    folder.mkdir(parents=True)
    values = {"name": name, "class_name": class_name(name)}
    for target, template in FILES.items():
        text = (TEMPLATES / template).read_text("utf-8")
        for key, value in values.items():
            text = text.replace("{{" + key + "}}", value)
        (folder / target).write_text(text, "utf-8")
    return folder
