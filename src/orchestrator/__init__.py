"""orchestrator: drive AI coding agents through a plan, judge every attempt, ask a human when needed.

>>> from orchestrator import interpret, Brain
>>> interpret("All 12 tests pass. Would you like me to also add docs?").verdict
'completed'
>>> Brain(backend="rules").should_retry_or_escalate(
...     "1.1", "Create data model", ["Failed: ImportError - no module named pandas"], 1).decision
'retry'
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from orchestrator.brain import Brain, RetryDecision
    from orchestrator.interpret import Interpretation, interpret
    from orchestrator.models import Plan, Task, TaskStatus, UserError
    from orchestrator.plans import load_plan

_LAZY = {
    "Brain": "orchestrator.brain",
    "RetryDecision": "orchestrator.brain",
    "Interpretation": "orchestrator.interpret",
    "interpret": "orchestrator.interpret",
    "Plan": "orchestrator.models",
    "Task": "orchestrator.models",
    "TaskStatus": "orchestrator.models",
    "UserError": "orchestrator.models",
    "load_plan": "orchestrator.plans",
}


# Load the (light) `orchestrator.interpret` package now: loaded later, the import system would
# bind the package itself to `orchestrator.interpret`, shadowing the function served below.
import_module("orchestrator.interpret")
globals().pop("interpret", None)


def __getattr__(name: str) -> Any:
    """The public names, imported when first used: `import orchestrator.cli` (every command
    line) must not pay for the interpreter, the brain and its LLM clients."""
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'orchestrator' has no attribute {name!r}")


__all__ = [
    "Brain",
    "Interpretation",
    "Plan",
    "RetryDecision",
    "Task",
    "TaskStatus",
    "UserError",
    "__version__",
    "interpret",
    "load_plan",
]
