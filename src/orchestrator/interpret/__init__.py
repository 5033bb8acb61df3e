"""Interpreting an attempt's output: completed, needs a human (and why), or failed.

>>> from orchestrator.interpret import interpret
>>> interpret("STATUS: needs_human\\nQUESTION: Redis or in-memory?").verdict
'needs_human'
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from orchestrator.interpret.core import interpret, interpret_rules
    from orchestrator.interpret.destructive import (
        classify_command,
        destructive_command,
        is_extreme_destructive,
    )
    from orchestrator.interpret.model import WHY, Interpretation, Source

_WHERE = {
    "interpret": "core",
    "interpret_rules": "core",
    "classify_command": "destructive",
    "destructive_command": "destructive",
    "is_extreme_destructive": "destructive",
    "WHY": "model",
    "Interpretation": "model",
    "Source": "model",
}


def __getattr__(name: str) -> Any:
    """Imported on first use: `interpret.model` alone (the types the store and the human panels
    need) must not compile every rule table and load the LLM clients."""
    if name not in _WHERE:
        raise AttributeError(f"module 'orchestrator.interpret' has no attribute {name!r}")
    value = getattr(import_module(f"orchestrator.interpret.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


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
