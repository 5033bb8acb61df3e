"""The console under `--parallel`: one live line per running task (at a terminal, one rich `Live`
holding them all; rich allows one live display at a time), and every task's own lines prefixed by
nothing more than they already carry (each names its task). Everything else is the sequential
console's (`ConsoleObserver`)."""

from __future__ import annotations

import time

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.markup import escape
from rich.text import Text

from orchestrator.console import INDENT, Reporter, fmt_duration
from orchestrator.events import (
    AgentActivity,
    AttemptFinished,
    AttemptStarted,
    EscalationAnswered,
    EscalationOpened,
    Event,
    RunFinished,
    TaskFinished,
    Waiting,
)
from orchestrator.observers.console import ConsoleObserver

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class _Line:
    def __init__(self, task_id: str, attempt: int) -> None:
        self.task_id, self.attempt = task_id, attempt
        self.started = time.monotonic()
        self.last = "starting"


class _Lines:
    """Re-rendered a few times a second: the elapsed time of every running task ticks."""

    def __init__(self) -> None:
        self.lines: dict[str, _Line] = {}

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        now = time.monotonic()
        rows = []
        for line in list(self.lines.values()):
            elapsed = now - line.started
            frame = FRAMES[int(elapsed * 8) % len(FRAMES)]
            text = (
                f"{INDENT}{frame} {fmt_duration(elapsed):>6}  task {line.task_id} "
                f"attempt {line.attempt}  → {line.last}"
            )
            rows.append(Text(text[: options.max_width], style="dim"))
        yield Group(*rows)


class LanesConsole(ConsoleObserver):
    def __init__(self, reporter: Reporter, mode: str) -> None:
        super().__init__(reporter, mode)
        self.lanes = _Lines()
        self._display: Live | None = None
        self._asking = 0

    def notify(self, event: Event) -> None:
        r = self.report
        if isinstance(event, AgentActivity):
            line = self.lanes.lines.get(event.task_id)
            if line is not None:
                line.last = event.event.summary.replace("\n", " ")[:120]
                if not r.is_terminal and event.event.kind == "tool":
                    r.note(f"[{event.task_id}] → {line.last}", "dim")
            return
        if isinstance(event, AttemptStarted):
            r.note(f"Task {event.task_id}: invoking {event.agent} (attempt {event.number})...")
            self.lanes.lines[event.task_id] = _Line(event.task_id, event.number)
            self._show()
            return
        if isinstance(event, (AttemptFinished, TaskFinished, EscalationOpened)):
            self.lanes.lines.pop(event.task_id, None)
        if isinstance(event, EscalationOpened) and self.mode == "terminal":
            self._asking += 1  # the prompt takes the terminal: no live lines under it
            self._hide()
        elif isinstance(event, EscalationAnswered) and self._asking:
            self._asking -= 1
            if self.lanes.lines:
                self._show()
        if isinstance(event, Waiting):  # no countdown display: the other lanes' lines stay
            pause = max(0.0, event.until - time.time())
            r.line(
                f"Task {escape(event.task_id)}: {escape(event.reason)}; waiting {pause:.0f}s "
                "instead of burning attempts",
                "yellow",
            )
            return
        if isinstance(event, RunFinished):
            self._hide()
        super().notify(event)

    def _show(self) -> None:
        console = self.report.console
        if self._display is None and console.is_terminal and not self._asking:
            self._display = Live(self.lanes, console=console, refresh_per_second=8, transient=True)
            self._display.start()

    def _hide(self) -> None:
        if self._display is not None:
            self._display.stop()
            self._display = None
