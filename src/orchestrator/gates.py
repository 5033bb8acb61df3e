"""Quality gates: commands that must pass before a task counts as COMPLETED.

Commands are split like a shell would split words but run without a shell: no pipes, globbing or
`&&`. Write `sh -c '...'` yourself in orchestrator.toml when you really need a shell.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from orchestrator.agents.process import run_process


@dataclass
class GateResult:
    command: str
    exit_code: int
    log_path: Path
    tail: str
    duration_s: float
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def summary(self, lines: int = 30) -> str:
        body = "\n".join(self.tail.rstrip().splitlines()[-lines:])
        why = "timed out" if self.timed_out else f"exit {self.exit_code}"
        return f"Gate `{self.command}` failed ({why}):\n{body}".rstrip()


def run_gates(
    commands: list[str], workdir: Path, log_dir: Path, timeout: float
) -> list[GateResult]:
    """Run every gate (not just up to the first failure) so the next prompt sees all that is wrong."""
    results = []
    for i, command in enumerate(commands, 1):
        log = log_dir / f"gate-{i}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            log.write_text(f"cannot parse gate command: {exc}\n", encoding="utf-8")
            results.append(GateResult(command, 2, log, f"cannot parse gate command: {exc}", 0.0))
            continue
        if not argv:
            continue
        try:
            proc = run_process(
                argv,
                cwd=workdir,
                stdout_path=log,
                stderr_path=log.with_suffix(".stderr.log"),
                timeout=timeout,
            )
        except (FileNotFoundError, PermissionError) as exc:
            msg = f"{argv[0]}: command not found or not executable ({exc.strerror})"
            log.write_text(msg + "\n", encoding="utf-8")
            results.append(GateResult(command, 127, log, msg, 0.0))
            continue
        tail = (proc.stdout_tail(8000) + "\n" + proc.stderr_tail(8000)).strip()
        results.append(
            GateResult(command, proc.exit_code, log, tail, proc.duration_s, proc.timed_out)
        )
    return results
