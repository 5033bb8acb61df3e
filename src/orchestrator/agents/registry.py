"""Agents by name. Adding an agent is one module (an adapter class with an `options_model` and a
`from_settings`) and one line in `ADAPTERS`; config validation and `--agent` follow from it.

Modules are imported lazily, so a missing optional CLI or SDK never slows down or breaks the others.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol, cast

from orchestrator.agents.base import Agent, AgentOptions
from orchestrator.models import UserError

if TYPE_CHECKING:
    from orchestrator.config import Settings

ADAPTERS: dict[str, str] = {
    "claude": "orchestrator.agents.claude:ClaudeAgent",
    "codex": "orchestrator.agents.codex:CodexAgent",
    "gemini": "orchestrator.agents.gemini:GeminiAgent",
    "aider": "orchestrator.agents.aider:AiderAgent",
    "command": "orchestrator.agents.command:CommandAgent",
    "replay": "orchestrator.agents.replay:ReplayAgent",
}
NAMES = tuple(ADAPTERS)


class Adapter(Protocol):
    """What the registry needs of an adapter class, besides the `Agent` protocol of its instances."""

    options_model: ClassVar[type[AgentOptions]]
    """Its options (`[name]` section, `[tasks."ID"]` overrides); unknown ones are refused."""

    @classmethod
    def from_settings(cls, settings: Settings, plan_path: Path) -> Agent:
        """A ready agent; raises UserError/ConfigError (exit 2) when it cannot start."""
        ...


def adapter(name: str) -> type[Adapter]:
    target = ADAPTERS.get(name)
    if target is None:
        raise UserError(f"unknown agent {name!r}; choose one of: {', '.join(NAMES)}")
    module, _, cls = target.partition(":")
    return cast("type[Adapter]", getattr(importlib.import_module(module), cls))


def options_model(name: str) -> type[AgentOptions]:
    return adapter(name).options_model


def create(name: str, settings: Settings, plan_path: Path) -> Agent:
    """The adapter named `name`, with its preflight run, so bad set-up fails at start (exit 2)."""
    return adapter(name).from_settings(settings, plan_path)
