"""orchestrator: drive AI coding agents through a plan, judge every attempt, ask a human when needed."""

from __future__ import annotations

__version__ = "0.1.0"
