"""Any CLI agent from a command template, e.g. `my-agent --prompt-file {prompt_file}`."""

from __future__ import annotations

import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.agents.base import AgentEvent, AgentOptions, AgentResult, AttemptContext
from orchestrator.agents.process import run_process
from orchestrator.models import UserError

if TYPE_CHECKING:
    from orchestrator.config import Settings

PLACEHOLDERS = ("prompt_file", "workdir", "task_id")


def render_argv(template: str, values: dict[str, str]) -> list[str]:
    """Split the template first, then fill each argument: a value with spaces stays one argument."""
    return fill(split_template(template), values, template)


def split_template(template: str) -> list[str]:
    try:
        parts = shlex.split(template)
    except ValueError as exc:
        raise UserError(f"--agent-cmd {_shown(template)}: {exc}; fix the quoting") from None
    if not parts:
        raise UserError("--agent-cmd is empty; give the command that runs your agent")
    return parts


def fill(parts: list[str], values: dict[str, str], template: str) -> list[str]:
    out = []
    for part in parts:
        try:
            out.append(part.format(**values))
        except (KeyError, IndexError, ValueError) as exc:
            raise UserError(
                f"--agent-cmd {_shown(template)}: unknown placeholder {exc}; "
                "use {prompt_file}, {workdir} or {task_id}"
            ) from None
    return out


def _shown(template: str) -> str:
    """The template as an error may show it: a token inside it is cut out."""
    from orchestrator.redaction import redact_text

    return repr(redact_text(template))


class CommandOptions(AgentOptions):
    """No options: the command template (`--agent-cmd`) says everything."""


class CommandAgent:
    name = "command"
    options_model = CommandOptions

    def __init__(self, template: str) -> None:
        self.parts = split_template(template)  # once: not per attempt
        fill(self.parts, dict.fromkeys(PLACEHOLDERS, "x"), template)  # fail at start, not mid-run
        self.template = template

    @classmethod
    def from_settings(cls, settings: Settings, plan_path: Path) -> CommandAgent:
        if not settings.agent_cmd:
            raise UserError(
                "--agent command needs --agent-cmd 'my-agent --prompt-file {prompt_file}'"
            )
        return cls(settings.agent_cmd)

    def run(self, ctx: AttemptContext) -> AgentResult:
        argv = fill(
            self.parts,
            {
                "prompt_file": str(ctx.prompt_file),
                "workdir": str(ctx.workdir),
                "task_id": ctx.task.id,
            },
            self.template,
        )
        started = time.monotonic()

        def line(text: str) -> None:
            if text.strip():
                ctx.on_event(AgentEvent(kind="text", summary=text.strip()[:200]))

        try:
            proc = run_process(
                argv,
                cwd=ctx.workdir,
                stdout_path=ctx.artifacts / "output.txt",  # its output, whole: the runner's file
                stderr_path=ctx.artifacts / "stderr.log",
                timeout=ctx.timeout,
                on_line=line,
            )
        except FileNotFoundError:
            return AgentResult(
                output="",
                exit_code=127,
                error=f"agent command not found: {argv[0]!r}",
                duration_s=time.monotonic() - started,
            )
        output = proc.stdout_tail()
        error = None
        if proc.timed_out:
            error = f"agent timed out after {ctx.timeout:.0f}s and was killed"
        elif proc.exit_code != 0:
            error = f"agent exited with {proc.exit_code}: {proc.stderr_tail(2000).strip()[-500:]}"
        return AgentResult(
            output=output,
            exit_code=proc.exit_code,
            transcript_path=proc.stdout_path,
            duration_s=proc.duration_s,
            error=error,
        )
