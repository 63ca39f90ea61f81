"""Bot processes: manifests, the sandbox, and starting/stopping bots (the sandbox: protocol/PROTOCOL.md section 7).

``load_manifest(bot_dir)`` reads a bot folder's ``bot.toml``; ``start_bot(manifest, ...)``
is the one way to launch a bot, returning a ``BotProcess`` context manager.
"""

from arena.botproc.fingerprint import fingerprint
from arena.botproc.manifest import MANIFEST_NAME, Manifest, ManifestError, load_manifest
from arena.botproc.process import BotProcess, start_bot, tail_file
from arena.botproc.sandbox import (
    SANDBOX_WORKDIR, Limits, SandboxError, SandboxMode, bwrap_status, resolve_mode,
)

__all__ = [
    "MANIFEST_NAME", "SANDBOX_WORKDIR", "BotProcess", "Limits", "Manifest", "ManifestError",
    "SandboxError", "SandboxMode", "bwrap_status", "fingerprint", "load_manifest",
    "resolve_mode", "start_bot", "tail_file",
]
