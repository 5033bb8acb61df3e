"""orchestrator: drive AI coding agents through a plan, judge every attempt, ask a human when needed.

>>> from orchestrator import interpret, Brain
>>> interpret("All 12 tests pass. Would you like me to also add docs?").verdict
'completed'
>>> Brain(backend="rules").should_retry_or_escalate(
...     "1.1", "Create data model", ["Failed: ImportError - no module named pandas"], 1).decision
'retry'
"""

from __future__ import annotations

__version__ = "0.1.0"

from orchestrator.brain import Brain, RetryDecision
from orchestrator.interpret import Interpretation, interpret
from orchestrator.models import Plan, Task, TaskStatus, UserError
from orchestrator.plans import load_plan

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
