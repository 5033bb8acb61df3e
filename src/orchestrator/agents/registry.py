"""Agents by name, imported lazily so a missing optional CLI never slows down or breaks the others."""

from __future__ import annotations

from orchestrator.agents.base import Agent
from orchestrator.config import Settings
from orchestrator.models import UserError

NAMES = ("claude", "codex", "gemini", "aider", "command", "replay")


def create(name: str, settings: Settings) -> Agent:
    agent: Agent
    if name == "claude":
        from orchestrator.agents.claude import ClaudeAgent
        from orchestrator.policy import CommandPolicy

        agent = ClaudeAgent(
            options=settings.claude.model_dump(exclude_none=True),
            policy=CommandPolicy.from_config(settings.policy),
        )
        agent.preflight()
        return agent
    if name == "codex":
        from orchestrator.agents.codex import CodexAgent

        agent = CodexAgent(settings.codex)
        agent.preflight()
        return agent
    if name == "gemini":
        from orchestrator.agents.gemini import GeminiAgent

        agent = GeminiAgent(settings.gemini)
        agent.preflight()
        return agent
    if name == "aider":
        from orchestrator.agents.aider import AiderAgent

        agent = AiderAgent(settings.aider)
        agent.preflight()
        return agent
    raise UserError(f"unknown agent {name!r}; choose one of: {', '.join(NAMES)}")
