"""``arena validate``: the compliance suite for bot folders (protocol/PROTOCOL.md section 12).

``validate(bot_dir, Settings(...)) -> Report``; ``report.passed`` is the verdict and
``report.lines()`` / ``report.to_dict()`` its text and JSON forms. The steps are listed in
``arena.validation.suite``.
"""

from arena.validation.report import Check, Report, Status, Step
from arena.validation.suite import DEFAULT_OPPONENT, STEPS, Settings, validate

__all__ = ["DEFAULT_OPPONENT", "STEPS", "Check", "Report", "Settings", "Status", "Step", "validate"]
