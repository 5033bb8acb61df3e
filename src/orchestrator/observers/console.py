"""The console as an observer: seed 000's lines, the live line while the agent works, a countdown
while a rate limit resets, the question panel off a terminal, and the summary table."""

from __future__ import annotations

import time
from contextlib import ExitStack
from typing import Any

from rich.live import Live
from rich.markup import escape
from rich.text import Text

from orchestrator.console import INDENT, Reporter, fmt_cost, fmt_duration
from orchestrator.events import (
    AgentActivity,
    AttemptFinished,
    AttemptInterrupted,
    AttemptStarted,
    ConsultantActed,
    EscalationAnswered,
    EscalationOpened,
    Event,
    LevelReached,
    LoopDetected,
    Notice,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    Waiting,
)


class _Countdown:
    def __init__(self, until: float, reason: str) -> None:
        self.until, self.reason = until, reason

    def __rich__(self) -> Text:
        left = max(0.0, self.until - time.time())
        return Text(f"{INDENT}⏳ {fmt_duration(left):>6} left  {self.reason}", style="dim")


class ConsoleObserver:
    def __init__(self, reporter: Reporter, mode: str) -> None:
        self.report = reporter
        self.mode = mode
        self._live = ExitStack()
        self._on_event: Any = None
        self._loops: dict[str, LoopDetected] = {}

    def _stop_live(self) -> None:
        self._live.close()
        self._on_event = None

    def notify(self, event: Event) -> None:
        r = self.report
        if isinstance(event, AgentActivity):
            if self._on_event is not None:
                self._on_event(event.event)
            return
        if isinstance(event, (EscalationOpened, AttemptFinished, Waiting, RunFinished)):
            self._stop_live()
        if isinstance(event, RunStarted):
            if event.resumed:
                r.line(f"Resuming run {event.run_id}", "dim")
            else:
                r.line(
                    f"Run {event.run_id}: {event.tasks} tasks from {escape(event.plan_path)} "
                    f"with agent {event.agent}",
                    "dim",
                )
        elif isinstance(event, AttemptInterrupted):
            r.line(
                f"Task {event.task_id}: attempt {event.number} was interrupted; running it again",
                "yellow",
            )
        elif isinstance(event, TaskStarted):
            r.task_started(event.task_id, event.title)
        elif isinstance(event, AttemptStarted):
            r.invoking(event.agent)
            self._on_event = self._live.enter_context(r.live(f"attempt {event.number}"))
        elif isinstance(event, AttemptFinished):
            self._attempt_finished(event)
        elif isinstance(event, LoopDetected):
            self._loops[event.task_id] = event
        elif isinstance(event, LevelReached):
            r.line(escape(event.headline), "bold yellow")
        elif isinstance(event, ConsultantActed):
            r.note(f"Consultant: {event.root_cause}"[:300], "cyan")
            if event.reverted_to:
                r.note(
                    f"reverted to before task {event.reverted_to}; redoing {', '.join(event.redo) or '-'} first",
                    "cyan",
                )
            for hint in event.hints[:5]:
                r.note(f"hint: {hint}"[:300], "cyan")
        elif isinstance(event, EscalationOpened):
            self._opened(event)
        elif isinstance(event, EscalationAnswered):
            self._answered(event)
        elif isinstance(event, TaskFinished):
            if event.status == "COMPLETED" and event.reason != "verification_passed":
                r.completed(event.task_id, event.duration_s, event.cost_usd)
            elif event.status == "SKIPPED":
                r.line(f"Task {escape(event.task_id)}: SKIPPED by a human")
        elif isinstance(event, Waiting):
            pause = max(0.0, event.until - time.time())
            r.line(
                f"Task {escape(event.task_id)}: {escape(event.reason)}; waiting {pause:.0f}s "
                "instead of burning attempts",
                "yellow",
            )
            if r.is_terminal:
                self._live.enter_context(
                    Live(_Countdown(event.until, event.reason), console=r.console, transient=True)
                )
        elif isinstance(event, Notice):
            r.line(event.text, event.style)
        elif isinstance(event, RunFinished):
            self._run_finished(event)

    def _attempt_finished(self, e: AttemptFinished) -> None:
        r = self.report
        if e.verdict == "failed" and not (e.outcome == "escalate" and e.asker == "agent"):
            r.failed(
                e.task_id, e.level_attempt, e.attempt_cap, e.error_summary or e.reason, e.level
            )
        if e.outcome == "retry":
            r.retrying(e.task_id, e.guidance)
        elif e.outcome == "escalate" and e.asker == "agent":
            r.line("NEEDS HUMAN INPUT", "bold yellow")

    def _opened(self, e: EscalationOpened) -> None:
        from orchestrator.humans import render_panel

        r, esc = self.report, e.escalation
        loop = self._loops.pop(e.task_id, None)
        if loop is not None:
            r.line("Stopping to prevent resource waste.", "yellow")
            r.console.print(f"\n{loop.similarity_line}\nPlease investigate and provide guidance.\n")
        if esc["detail"].get("live"):
            r.line("NEEDS HUMAN INPUT", "bold yellow")
        if esc["asker"] == "orchestrator":
            self._analysis(e.request)
        if esc["asker"] == "budget":
            d = esc["detail"]
            r.line(
                f"BUDGET REACHED: {d.get('budget')} cap {fmt_cost(d.get('cap_usd'))}, "
                f"spent {fmt_cost(d.get('spent_usd'))}",
                "bold yellow",
            )
            r.note(
                f"Answer escalation {esc['id']} with --retry and resume with a higher --max-budget-usd "
                "(run) or max_budget_usd of the agent (task), or --skip / --abort."
            )
        if self.mode == "terminal":
            return  # the terminal prompt shows the same panel
        then = (
            "this run goes on by itself"
            if self.mode == "wait"
            else f"then: orchestrator resume {e.run_id}"
        )
        how = (
            f"Answer: orchestrator answer {esc['id']} (TEXT | --option X | --recommended | --retry "
            f"| --skip | --abort); {then}"
        )
        render_panel(r.console, esc, esc["task_id"], how=how)
        if self.mode == "wait":
            r.note(f"Waiting for an answer: orchestrator answer {esc['id']} …")

    def _analysis(self, hil: dict[str, Any]) -> None:
        """Seed 002's level-2 summary: what was spent, what was tried, what the consultant learnt."""
        summary, analysis = hil.get("summary", {}), hil.get("consultant_analysis", {})
        models = ", ".join(summary.get("models_tried") or []) or "-"
        self.report.note(
            f"Spent: {summary.get('total_attempts')} attempts, {summary.get('time_spent_minutes')} min, "
            f"{fmt_cost(summary.get('cost_usd'))}; models tried: {models}; "
            f"consultant interventions: {summary.get('level_1_interventions', 0)}"
        )
        for key in ("suspected_cause", "learning"):
            if analysis.get(key):
                self.report.note(f"{key.replace('_', ' ').capitalize()}: {analysis[key]}"[:400])

    def _answered(self, e: EscalationAnswered) -> None:
        r = self.report
        if e.action in ("option", "recommended", "text"):
            r.line(f"Resuming Task {escape(e.task_id)} with guidance...")
        elif e.action == "retry":
            r.line(f"Retrying Task {escape(e.task_id)}...")
        elif e.action == "abort":
            r.line(f"Task {escape(e.task_id)}: run aborted by a human", "red")

    def _run_finished(self, e: RunFinished) -> None:
        r = self.report
        r.summary(e.summary, e.elapsed_s)
        if e.exit_code == 3:
            r.line(
                f"Waiting for a human: `orchestrator escalations`, `orchestrator answer ID …`, "
                f"then `orchestrator resume {e.run_id}`",
                "yellow",
            )
        elif e.exit_code == 130:
            r.line(f"Interrupted. Continue with: orchestrator resume {e.run_id}", "yellow")
