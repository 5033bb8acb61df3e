"""What the CLI-driven adapters (codex, gemini, aider) share: finding the binary, the child's
environment, translating the error an agent reported (its error events, exit code) into a
`rules.platform` kind (wait, back off, or ask a person), and `CLIAgent`, the start and end of an
attempt that are the same for all three."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from orchestrator.agents.base import AgentOptions, AgentResult, AttemptContext, HumanQuestion
from orchestrator.agents.process import ProcessResult
from orchestrator.models import ConfigError
from orchestrator.rules.external import service_error_kind as service_error_kind
from orchestrator.rules.platform import PlatformError, kind_of, reset_time

if TYPE_CHECKING:
    from orchestrator.config import Settings

PROJECT_ROOT = Path(__file__).resolve().parents[3]
"""The source checkout when installed editable; `.ci/install-agents.sh` installs CLIs under it."""

LOCAL_BIN_DIRS = (Path(".agents/node_modules/.bin"), Path(".agents/bin"))


def find_cli(name: str, explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The CLI to run: `explicit` (a path or a name), else PATH, else a project-local `.agents/`."""
    if explicit:
        found = shutil.which(str(explicit))
        return found or (str(explicit) if Path(explicit).is_file() else None)
    on_path = shutil.which(name)
    if on_path:
        return on_path
    for base in (Path.cwd(), PROJECT_ROOT):
        for sub in LOCAL_BIN_DIRS:
            candidate = base / sub / name
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    return None


def json_object(raw: str) -> dict[str, Any] | None:
    """One line of a JSONL stream as an object; None for anything else (log lines, bad JSON)."""
    raw = raw.strip()
    if not raw.startswith("{"):
        return None
    try:
        ev = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return ev if isinstance(ev, dict) else None


def child_env(overrides: Mapping[str, Any] | None) -> dict[str, str]:
    """`os.environ` with `overrides` on top; an override of None removes the variable."""
    env = dict(os.environ)
    for key, value in (overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = str(value)
    return env


def unwrap_shell(command: str) -> str:
    """`/bin/bash -lc "pytest -q"` → `pytest -q`, for the live line; anything else unchanged."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return command
    if len(argv) == 3 and Path(argv[0]).name in ("bash", "sh", "zsh") and argv[1] in ("-c", "-lc"):
        return argv[2]
    return command


def short(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def not_found(program: str, explicit: Any, install: str) -> str:
    """The message for a missing CLI: fix `cli_path` when one was given, else how to install it."""
    if explicit:
        return f"{program} not found at {explicit!r}; fix cli_path"
    return f"{program} not found: install it ({install}, or .ci/install-agents.sh) or set cli_path"


class CLIAgent(ABC):
    """An adapter that runs one CLI process per attempt. `run` merges the options, finds the CLI
    (exit 127 when missing) and makes the artifacts folder; `attempt` does the agent's own part
    and uses `failure` for the error text and question."""

    name: str
    cli_name: str
    """The executable, also the name used in error texts."""
    program: str
    """How a not-found message names it (`codex CLI`)."""
    install: str
    """How to install it, for the not-found message."""
    label: str
    """How an `external_service` question names it (`Codex`)."""

    options_model: ClassVar[type[AgentOptions]]
    """Its `[name]` section and per-task overrides (see the adapter's module docstring)."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self.defaults = dict(options or {})

    @classmethod
    def from_settings(cls, settings: Settings, plan_path: Path) -> CLIAgent:
        agent = cls(settings.agent_section(cls.name))
        agent.preflight()
        return agent

    def not_found(self, explicit: Any) -> str:
        return not_found(self.program, explicit, self.install)

    def preflight(self) -> None:
        """Raise `ConfigError` when the CLI cannot be found."""
        if find_cli(self.cli_name, self.defaults.get("cli_path")) is None:
            raise ConfigError(self.not_found(self.defaults.get("cli_path")))

    def run(self, ctx: AttemptContext) -> AgentResult:
        opts = {**self.defaults, **ctx.options}
        started = time.monotonic()
        cli = find_cli(self.cli_name, opts.get("cli_path"))
        if cli is None:
            return AgentResult(output="", exit_code=127, error=self.not_found(opts.get("cli_path")))
        ctx.artifacts.mkdir(parents=True, exist_ok=True)
        result = self.attempt(ctx, opts, cli)
        result.duration_s = time.monotonic() - started
        if result.platform is None and result.question is None:
            result.platform = self.platform_error(result.error, result.exit_code)
        return result

    def platform_kind(self, error: str, exit_code: int) -> str | None:
        """The `rules.platform` kind of the error the agent reported (its error event's message,
        `litellm.<Kind>Error`), if it is one; an adapter adds what its exit codes say."""
        return kind_of(error)

    def platform_error(self, error: str | None, exit_code: int) -> PlatformError | None:
        """The agent platform's error behind `error` (none for our own timeout), with its reset
        time when the message names one."""
        if not error or error.startswith(self.timeout_prefix):
            return None
        kind = self.platform_kind(error, exit_code)
        if kind is None:
            return None
        source = f"{self.cli_name} error (exit {exit_code})"
        return PlatformError(kind, error, reset_time(error), None, source, self.label)

    @property
    def timeout_prefix(self) -> str:
        return f"{self.cli_name} timed out after"

    @abstractmethod
    def attempt(self, ctx: AttemptContext, opts: dict[str, Any], cli: str) -> AgentResult:
        """Run `cli` once with the merged `opts`; `run` sets the result's duration."""

    def exit_error(self, proc: ProcessResult) -> str:
        """The error for a non-zero exit the output did not explain."""
        stderr = proc.stderr_tail(2000).strip()[-500:]
        return f"{self.cli_name} exited with {proc.exit_code}: {stderr}"

    def failure(
        self, proc: ProcessResult, timeout: float | None, parsed_error: str | None
    ) -> tuple[str | None, HumanQuestion | None]:
        """The attempt's error (a timeout wins over what the output said; a non-zero exit with
        nothing said gets `exit_error`). No question: a key, quota or limit error is a platform
        error (`platform_error`, set by `run`), which the judge asks about through one table."""
        error = parsed_error
        if proc.timed_out:
            error = f"{self.timeout_prefix} {timeout:.0f}s and was killed"
        elif proc.exit_code != 0 and error is None:
            error = self.exit_error(proc)
        return error, None
