"""Interpreting an attempt's output: completed, needs a human (and why), or failed.

>>> from orchestrator.interpret import interpret
>>> interpret("STATUS: needs_human\\nQUESTION: Redis or in-memory?").verdict
'needs_human'
"""

from __future__ import annotations

from orchestrator.interpret.core import interpret, interpret_rules
from orchestrator.interpret.destructive import (
    classify_command,
    destructive_command,
    is_extreme_destructive,
)
from orchestrator.interpret.model import WHY, Interpretation, Source

__all__ = [
    "WHY",
    "Interpretation",
    "Source",
    "classify_command",
    "destructive_command",
    "interpret",
    "interpret_rules",
    "is_extreme_destructive",
]
