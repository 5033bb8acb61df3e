"""What must hold before a run starts or resumes, checked before anything is recorded.

Each of these used to be found by the first attempt: a missing agent program or an unparsable
gate failed every attempt alike, so the run spent its retries and then asked a human about a
typo. Here each is one line (exit 2) at start, and the store stays as it was.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from orchestrator.models import ConfigError, PlanError, UserError

if TYPE_CHECKING:
    from orchestrator.config import Settings
    from orchestrator.models import Plan


def check(settings: Settings, plan: Plan, workdir: Path) -> None:
    """Raise a UserError when the workdir, a gate command or the agent program cannot work."""
    check_workdir(workdir)
    check_gates(settings, plan)
    check_agent(settings, plan, workdir)


def check_workdir(workdir: Path) -> None:
    """A directory, or a path one can be made at (no file in the way)."""
    where = str(workdir)
    for path in (workdir, *workdir.absolute().parents):
        if path.exists():
            if not path.is_dir():
                what = "is" if path == workdir else f"is inside {str(path)!r}, which is"
                raise UserError(
                    f"workdir {what} a file, not a directory; pass --workdir DIR", path=where
                )
            if path != workdir and not os.access(path, os.W_OK | os.X_OK):
                raise UserError(
                    f"workdir cannot be made: {str(path)!r} is not writable; pass --workdir DIR",
                    path=where,
                )
            return


def check_gates(settings: Settings, plan: Plan) -> None:
    """Every gate splits into words the way `gates.run_gates` will split it."""
    for task in plan.tasks:
        for command in task.verify:
            problem = _unparsable(command)
            if problem:
                raise PlanError(
                    f"task {task.id}: gate {command[:80]!r} cannot be split into words "
                    f"({problem}); fix its quoting",
                    path=task.source or plan.path,
                    line=task.line or None,
                )
    for command in settings.gates.commands:
        problem = _unparsable(command)
        if problem:
            raise ConfigError(
                f"setting 'gates.commands': {command[:80]!r} cannot be split into words "
                f"({problem}); fix its quoting"
            )


def _unparsable(command: str) -> str | None:
    try:
        shlex.split(command)
    except ValueError as exc:
        return str(exc).lower()
    return None


def check_agent(settings: Settings, plan: Plan, workdir: Path) -> None:
    """The program the agent runs is there: `--agent-cmd`'s first word, or a CLI agent's
    `cli_path` set for a task (the agent's own section is checked by its adapter)."""
    if settings.agent == "command" and settings.agent_cmd:
        _check_command(settings.agent_cmd, workdir)
        return
    check_task_programs(settings, plan)


def check_task_programs(settings: Settings, plan: Plan) -> None:
    """A CLI agent's `cli_path` set for a task exists. Checked before the adapter is built, so
    the task's own path is named even where the agent's default CLI is absent."""
    from orchestrator.agents import registry
    from orchestrator.agents._cli import find_cli, not_found

    cls = registry.adapter(settings.agent)
    cli_name = getattr(cls, "cli_name", None)
    if cli_name is None:
        return
    for task in plan.tasks:
        explicit = settings.agent_options(task.id).get("cli_path")
        if explicit and find_cli(cli_name, explicit) is None:
            program = getattr(cls, "program", cli_name)
            raise ConfigError(f"tasks.{task.id}: {not_found(program, explicit, '')}")


def _check_command(template: str, workdir: Path) -> None:
    try:
        first = shlex.split(template)[0]
    except (ValueError, IndexError):
        return  # the adapter's own check says what is wrong with the template
    if "{prompt_file}" in first or "{task_id}" in first:
        return  # known only per attempt
    program = first.replace("{workdir}", str(workdir))
    if "/" in program:
        path = Path(program) if Path(program).is_absolute() else workdir / program
        found = path.is_file() and os.access(path, os.X_OK)
    else:
        found = shutil.which(program) is not None
    if not found:
        raise ConfigError(
            f"--agent-cmd: {program!r} is not an executable program "
            f"({'no such file' if '/' in program else 'not on PATH'}); install it or fix the command"
        )
