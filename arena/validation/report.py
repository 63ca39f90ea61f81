"""The validation report: steps with pass/fail/skip, their evidence, text and JSON forms."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import orjson

SHOWN_CHARS = 400  # how much of a message the text report shows (the JSON keeps more)
KEPT_CHARS = 4096


class Status(StrEnum):
    """A step's verdict."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


@dataclass(slots=True)
class Check:
    """One item inside a step, e.g. one position of the decision-types step."""

    name: str
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


@dataclass(slots=True)
class Step:
    """One step of the suite, with what was sent, what came back and the bot's stderr."""

    name: str
    title: str
    status: Status = Status.PASS
    detail: str = ""
    checks: list[Check] = field(default_factory=list)
    sent: str | None = None
    received: str | None = None
    stderr: str | None = None
    elapsed_ms: float = 0.0

    @property
    def failed(self) -> bool:
        """Whether the step failed."""
        return self.status is Status.FAIL

    def fail(self, detail: str, *, sent: str | bytes | None = None, received: str | bytes | None = None,
             stderr: str | None = None) -> Step:
        """Mark the step failed with its reason and evidence; returns the step."""
        self.status = Status.FAIL
        self.detail = detail
        self.sent = _text(sent) if sent is not None else self.sent
        self.received = _text(received) if received is not None else self.received
        self.stderr = stderr or self.stderr
        return self

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "name": self.name, "title": self.title, "status": str(self.status), "detail": self.detail,
            "checks": [c.to_dict() for c in self.checks], "sent": self.sent, "received": self.received,
            "stderr": self.stderr, "elapsed_ms": round(self.elapsed_ms, 1),
        }


@dataclass(slots=True)
class Report:
    """The whole validation of one bot folder."""

    bot_dir: str
    name: str | None = None
    version: str | None = None
    fingerprint: str | None = None
    sandbox: str | None = None
    sandbox_view: dict[str, Any] | None = None
    steps: list[Step] = field(default_factory=list)
    elapsed_ms: float = 0.0

    @property
    def passed(self) -> bool:
        """True only when every step ran and passed."""
        return bool(self.steps) and all(s.status is Status.PASS for s in self.steps)

    @property
    def first_failure(self) -> Step | None:
        """The step that failed, if any."""
        return next((s for s in self.steps if s.failed), None)

    def step(self, name: str) -> Step:
        """The step called ``name`` (KeyError if there is none)."""
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (what the registry stores with an entry)."""
        failure = self.first_failure
        return {
            "bot_dir": self.bot_dir, "name": self.name, "version": self.version,
            "fingerprint": self.fingerprint, "sandbox": self.sandbox,
            "sandbox_view": self.sandbox_view, "passed": self.passed,
            "failed_step": failure.name if failure else None,
            "steps": [s.to_dict() for s in self.steps], "elapsed_ms": round(self.elapsed_ms, 1),
        }

    def summary(self) -> str:
        """One line: how many steps passed, failed and were skipped."""
        counts = {status: sum(s.status is status for s in self.steps) for status in Status}
        verdict = "PASSED" if self.passed else "FAILED"
        return (f"{verdict}: {counts[Status.PASS]} passed, {counts[Status.FAIL]} failed, "
                f"{counts[Status.SKIP]} skipped in {self.elapsed_ms / 1000:.1f} s")

    def lines(self) -> list[str]:
        """The report for people, like a test run: one line per step, evidence under failures."""
        who = f"{self.name} {self.version}" if self.name else "?"
        fp = f", fingerprint {self.fingerprint[:12]}" if self.fingerprint else ""
        out = [f"validating {self.bot_dir} ({who}{fp}; sandbox {self.sandbox or '?'})"]
        width = max((len(s.name) for s in self.steps), default=8)
        for step in self.steps:
            head = f"  {step.status.upper():4}  {step.name:<{width}}  {step.title}"
            detail = step.detail.splitlines()
            if detail and not step.failed and len(detail) == 1:
                head, detail = f"{head}: {detail[0]}", []
            out.append(head)
            out.extend(f"        {line}" for line in detail)
            for check in step.checks:
                if step.failed or not check.ok:
                    mark = "ok  " if check.ok else "FAIL"
                    said = check.detail if check.ok or check.detail not in step.detail else "(above)"
                    out.append(f"        [{mark}] {check.name}: {said}")
            if step.failed:
                for label, value in (("sent", step.sent), ("received", step.received),
                                     ("stderr", step.stderr)):
                    if value:
                        shown = value if len(value) <= SHOWN_CHARS else value[:SHOWN_CHARS] + " ..."
                        lines = shown.strip().splitlines() or [""]
                        out.append(f"        {label + ':':<9} {lines[0]}")
                        out.extend(f"                  {line}" for line in lines[1:])
        if self.sandbox is not None and any(s.name == "start" and s.status is Status.PASS
                                            for s in self.steps):
            out.extend(view_lines(self.sandbox_view))
        out.append(self.summary())
        return out


def view_lines(view: dict[str, Any] | None) -> list[str]:
    """The sandbox view (``SandboxView.to_dict()``) for people: the uid, namespaces and disk
    limit, one line per mount with its mode and size, the environment."""
    if view is None:
        return ["sandbox view: none. Without bubblewrap the bot runs as the arena's user and sees "
                "the whole machine: the fallback is not a security boundary"]
    out = [f"sandbox view: uid {view['uid']} gid {view['gid']}, working directory "
           f"{view['workdir']}, own {', '.join(view['namespaces'])} namespaces (no network), "
           f"writes at most {_mib(view['disk_bytes'])} in total"]
    for mount in view["mounts"]:
        what = {"bind": f"= {mount['source']}", "symlink": f"-> {mount['source']}",
                "data": f"written for the sandbox, {mount['bytes']} bytes"}.get(mount["kind"], mount["kind"])
        size = f", at most {_mib(mount['size_bytes'])}" if mount["size_bytes"] is not None else ""
        perms = f", mode {mount['perms']}" if mount["perms"] else ""
        out.append(f"  {'rw' if mount['writable'] else 'ro'}  {mount['target']}  {what}{size}{perms}"
                   f"  ({mount['purpose']})")
    out += [f"  env  {name}={value}" for name, value in view["env"].items()]
    return out


def _mib(n: int | None) -> str:
    return "half the RAM (the tmpfs default)" if n is None else f"{n / (1 << 20):g} MiB"


def _text(data: str | bytes) -> str:
    if isinstance(data, bytes):
        data = data[: KEPT_CHARS * 4].decode("utf-8", errors="replace")
    return data if len(data) <= KEPT_CHARS else data[:KEPT_CHARS] + f"... [{len(data) - KEPT_CHARS} more]"


def brief(raw: bytes | str | None) -> str:
    """A short description of one wire message: a request's seq, game and legal actions, or the
    message itself for anything else (used for the 'sent' and 'received' evidence)."""
    if raw is None:
        return "(nothing)"
    data = raw.encode() if isinstance(raw, str) else raw
    try:
        msg = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _text(data)
    if isinstance(msg, dict) and msg.get("type") == "request":
        view = msg.get("view") or {}
        return (f"request seq {msg.get('seq')} game {msg.get('game_id')!r} seat {msg.get('seat')} "
                f"hand {view.get('hand')} trick {view.get('trick_number')} "
                f"legal_actions {msg.get('legal_actions')}")
    return _text(data)
