"""Which agent commands must wait for a human before they run (seed 004: extreme destructive).

The agent adapters call `CommandPolicy.check` before every shell tool call. A hit is held and
asked as an `extreme_destructive` escalation with the exact command; routine commands
(`rm -rf node_modules`, `rm -rf build/` inside the workdir, `pytest`, `ls`) pass untouched.

Precedence: `allow` patterns (regexes searched in the whole command) win, then extra `deny`
patterns, then the built-in rules. The built-in rules are `orchestrator.rules.destructive` — the
same ones the interpreter uses on commands an agent proposes in its text — given the workdir, so
`rm` paths are resolved against it and a bare `git push --force` is judged by the checked-out branch.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.agents.base import HumanQuestion
from orchestrator.models import ConfigError
from orchestrator.rules.destructive import PROTECTED_BRANCHES, RULES, extreme_destructive

SHELL_TOOLS = ("Bash", "PowerShell")
"""Tools whose `command` input is a shell command; any tool input with a string `command` is too."""

ALLOW_WORDS = frozenset(
    {"allow", "yes", "y", "ok", "approve", "approved", "run it", "go", "proceed"}
)


@dataclass(frozen=True)
class PolicyHit:
    """A command held for a human: what it is, which rule caught it and why."""

    tool: str
    command: str
    rule: str
    reason: str

    def why(self) -> str:
        """The reason as one sentence for a person (`reason` is a fragment: "drops a database object")."""
        if self.rule == "deny-pattern":
            return f"This command {self.reason} in your policy settings, so it waits for your approval."
        return f"This command {self.reason}, which cannot be undone, so it waits for your approval."

    def question(self) -> HumanQuestion:
        return HumanQuestion(
            question=f"The agent wants to run: {self.command}",
            options=["Allow", "Deny"],
            recommendation="Deny",
            category="extreme_destructive",
            why=self.why(),
            detail={"command": self.command, "tool": self.tool, "rule": self.rule},
        )


def is_approval(answer: str | None) -> bool:
    """True when a human's answer to a held command means "let it run"."""
    if answer is None:
        return False
    return answer.strip().strip(".!").lower() in ALLOW_WORDS


def classify_command(
    command: str, workdir: Path | str, protected_branches: Iterable[str] = PROTECTED_BRANCHES
) -> tuple[str, str] | None:
    """(rule, reason) when a shell command run in WORKDIR is extreme destructive, else None."""
    found = extreme_destructive(command, workdir, protected_branches=protected_branches)
    return (found.rule, found.reason) if found else None


class CommandPolicy:
    """The configurable check every shell tool call goes through before it runs."""

    def __init__(
        self,
        deny: Iterable[str] = (),
        allow: Iterable[str] = (),
        protected_branches: Iterable[str] = PROTECTED_BRANCHES,
        builtin: bool = True,
        enabled: bool = True,
    ) -> None:
        self.deny = [self._compile(p, "deny") for p in deny]
        self.allow = [self._compile(p, "allow") for p in allow]
        self.protected_branches = tuple(protected_branches)
        self.builtin = builtin
        self.enabled = enabled
        """False: nothing is held at all (neither built-in rules nor deny patterns)."""

    KEYS = ("deny", "hold", "allow", "protected_branches", "builtin", "enabled")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> CommandPolicy:
        """Build from a config section: `{deny|hold: [...], allow: [...], enabled: bool, ...}`."""
        data = dict(data or {})
        unknown = set(data) - set(cls.KEYS)
        if unknown:
            raise ConfigError(
                f"policy: unknown key(s) {', '.join(sorted(unknown))}; use {', '.join(cls.KEYS)}"
            )
        return cls(
            deny=[*data.get("deny", ()), *data.get("hold", ())],
            allow=data.get("allow", ()),
            protected_branches=data.get("protected_branches", PROTECTED_BRANCHES),
            builtin=bool(data.get("builtin", True)),
            enabled=bool(data.get("enabled", True)),
        )

    @classmethod
    def from_config(cls, config: Any) -> CommandPolicy:
        """Build from the `[policy]` settings model (attributes) or a plain mapping."""
        if config is None or isinstance(config, Mapping):
            return cls.from_mapping(config)
        dump = getattr(config, "model_dump", None)
        if callable(dump):
            return cls.from_mapping(dump(exclude_none=True))
        return cls.from_mapping({k: getattr(config, k) for k in cls.KEYS if hasattr(config, k)})

    @staticmethod
    def _compile(pattern: str, kind: str) -> re.Pattern[str]:
        try:
            return re.compile(pattern)
        except re.error as e:
            raise ConfigError(f"policy {kind} pattern {pattern!r} is not a valid regex: {e}") from e

    def check(
        self, tool_name: str, tool_input: Mapping[str, Any], workdir: Path | str
    ) -> PolicyHit | None:
        """A `PolicyHit` when this tool call must wait for a human, else None."""
        command = tool_input.get("command")
        if not self.enabled or not isinstance(command, str) or not command.strip():
            return None
        if any(p.search(command) for p in self.allow):
            return None
        for p in self.deny:
            if p.search(command):
                return PolicyHit(
                    tool_name, command, "deny-pattern", f"matches the deny pattern {p.pattern!r}"
                )
        if not self.builtin:
            return None
        found = classify_command(command, workdir, self.protected_branches)
        if found is None:
            return None
        return PolicyHit(tool_name, command, found[0], found[1])

    def describe(self) -> dict[str, Any]:
        """What `orchestrator config show` prints for the policy."""
        rules = [f"{name}: {why}" for name, why in RULES.items()]
        return {
            "enabled": self.enabled,
            "checked_tools": [*SHELL_TOOLS, "any tool with a 'command' input"],
            "builtin_rules": rules if self.builtin else [],
            "deny": [p.pattern for p in self.deny],
            "allow": [p.pattern for p in self.allow],
            "protected_branches": list(self.protected_branches),
            "held_as": "extreme_destructive escalation (options: Allow, Deny)",
        }
