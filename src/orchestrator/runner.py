"""The run loop: pick the next ready task, take one step for it, apply the outcome's transition.

Everything the loop knows comes from the store, so `resume` is the same loop started again:
interrupted attempts are marked, answered questions applied, completed tasks never run twice. What
an outcome does is data (`transitions.TABLE`); what the world sees are events (`events.py`) that
observers — console, checkpoints, escalation files — receive without importing this module.
"""

from __future__ import annotations

import gc
import json
import logging
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from orchestrator import asking, history
from orchestrator.agents.base import Agent, AgentEvent, AgentResult, AttemptContext, HumanQuestion
from orchestrator.agents.process import supervised
from orchestrator.artifacts import beside, run_folder, write_text
from orchestrator.config import Settings
from orchestrator.console import fmt_cost
from orchestrator.events import (
    AgentActivity,
    AttemptInterrupted,
    AttemptStarted,
    Bus,
    EscalationAnswered,
    EscalationOpened,
    Event,
    GateFinished,
    Notice,
    RunFinished,
    RunStarted,
    TaskFinished,
    TaskStarted,
    Waiting,
)
from orchestrator.gates import GateResult, run_gates
from orchestrator.humans import Answer, record_answer, wait_for_answer
from orchestrator.judge import Judge, TaskState
from orchestrator.lock import Heartbeat
from orchestrator.models import Plan, Task, UserError
from orchestrator.plans import order
from orchestrator.rows import DONE, EscalationRow, RunStatus, TaskStatusName
from orchestrator.steps import Applying, Finished
from orchestrator.store import Store
from orchestrator.transitions import ANSWER_OUTCOMES, TABLE, Outcome, task_values

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PAUSED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
EXIT_TERMINATED = 143
"""SIGTERM: stopped like Ctrl-C (128 + the signal's number, as a shell reports it)."""
logger = logging.getLogger("orchestrator.runner")
Mode = Literal["terminal", "wait", "no-wait"]


@dataclass
class RunOutcome:
    run_id: str
    exit_code: int
    statuses: dict[str, str]


class RunStopped(Exception):
    """No further task starts: a human aborted, or the run's budget is spent."""


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: the run stops exactly as after Ctrl-C."""


@contextmanager
def frozen_heap() -> Iterator[None]:
    """What exists at the start (~90,000 objects) skips the collector's full passes (~30 ms)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextmanager
def terminated_as_interrupt() -> Iterator[None]:
    """Turn the first SIGTERM into `Terminated` (main thread only; later ones are ignored while
    the run stops)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = False

    def handler(_sig: int, _frame: object) -> None:
        nonlocal fired
        if not fired:
            fired = True
            raise Terminated

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class Runner:
    def __init__(
        self,
        store: Store,
        run_id: str,
        settings: Settings,
        agent: Agent,
        *,
        bus: Bus,
        ask: Any = None,
        interactive: bool | None = None,
        judge: Judge | None = None,
        consult: Any = None,
    ) -> None:
        """`ask(esc)` asks at a terminal (a Console's prompt); `consult(task, decision)` is level 1."""
        self.store, self.run_id, self.settings, self.agent = store, run_id, settings, agent
        self.bus, self.ask_terminal, self.consult = bus, ask, consult
        run = store.run(run_id)
        assert run is not None
        self.meta: dict[str, Any] = json.loads(run["settings_json"])
        self.plan: Plan = store.plan(run_id)
        self.workdir = Path(run["workdir"])
        self.folder = run_folder(self.meta, run_id)
        if interactive is None:
            interactive = sys.stdin.isatty() and sys.stdout.isatty()
        self.mode: Mode = (
            settings.wait if settings.wait != "auto" else ("terminal" if interactive else "no-wait")
        )
        self.judge = judge or Judge(settings)
        self.order = order(self.plan)
        self.statuses: dict[str, TaskStatusName] = {}
        self.first = 0
        """Index in `order` of the first task not done (a revert moves it back)."""
        self.failed = False
        self.asked: set[str] = set()
        """Tasks that ever asked a human (only their escalations can hold approved commands)."""
        self.spent = 0.0
        self.current: str | None = None
        """The task whose step is under way (questions asked mid-attempt belong to it)."""
        self.attempt_key: tuple[str, int] | None = None  # processes started are recorded on it
        self.lanes: Callable[[Runner], None] | None = None
        """`--parallel N`: drives the tasks instead of the loop below (`parallel.Lanes`)."""

    # -- the loop -------------------------------------------------------------------------------
    def execute(self, *, resumed: bool = False, token: str | None = None) -> RunOutcome:
        """Drive the run under its lock (`token`: held already, from `create_run`). Processes
        started carry the run's mark and are recorded; Ctrl-C and SIGTERM stop it alike
        (attempts marked, processes killed, lock released), exiting 130 and 143."""
        token = token or self.store.acquire_lock(self.run_id)
        beat = Heartbeat(self.store, self.run_id, token)
        started = time.monotonic()
        mark = self.store.process_mark(self.run_id)
        with terminated_as_interrupt(), frozen_heap(), self.store.held():
            status: RunStatus | None = None
            try:
                with supervised(mark, self.record_process, background=True):
                    self.start(resumed)
                    try:
                        if self.lanes is not None:
                            self.lanes(self)
                        else:
                            while (task := self.next_ready()) is not None:
                                self.step(task)
                    except RunStopped:
                        pass
                code = self.exit_code()
                status = {0: "COMPLETED", 1: "FAILED"}.get(code, "PAUSED")  # type: ignore[assignment]
            except UserError:  # e.g. an invalid user-decision.json: one line, exit 2, resumable
                if self.statuses:  # start() had marked it RUNNING
                    self.store.recover_interrupted(self.run_id)
                    status = "PAUSED"
                raise
            except KeyboardInterrupt as exc:
                self.store.recover_interrupted(self.run_id)
                code = EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
                status = "INTERRUPTED"
            finally:
                beat.stop()
                self.store.release_lock(self.run_id, token, status)  # one commit for both
            assert status is not None  # set unless an exception went on
            self.emit(
                RunFinished(
                    self.run_id,
                    status,
                    code,
                    time.monotonic() - started,
                    history.summary(self.store, self.run_id),
                )
            )
        return RunOutcome(self.run_id, code, dict(self.statuses))

    def step(self, task: Task) -> None:
        """One thing for the task — a spent budget, a plan checkpoint, the milestone's own checks or
        one attempt — then the table says what follows."""
        if self.current != task.id:
            self.current = task.id
            self.emit(TaskStarted(self.run_id, task.id, task.title))
        if (budget := self.over_budget(task)) is not None:
            self.transition(task, budget[0], escalation=budget[1])
        elif task.checkpoint:
            self.transition(task, "checkpoint", escalation=asking.plan_checkpoint(task))
        elif not (task.is_verification and self.verification_passes(task)):
            self.transition(task, *self.attempt(task))

    def start(self, resumed: bool) -> None:
        """A killed runner's processes are killed and its attempts marked before anything runs;
        RunStarted lets observers make up what it did not finish. A new run has none of that."""
        cut: list[Any] = []
        if resumed:
            self.ingest_decision_files()  # a bad one fails before anything is recorded
            cut = self.store.recover_interrupted(self.run_id)
            self.store.set_run_status(self.run_id, "RUNNING")
        n = len(self.plan.tasks)
        self.emit(RunStarted(self.run_id, self.plan.path, n, self.agent.name, resumed))
        for a in cut:
            self.emit(AttemptInterrupted(self.run_id, a["task_id"], a["number"]))
        if not resumed:  # recorded RUNNING, its tasks PENDING: nothing to read back or answer
            self.statuses = {t.id: "PENDING" for t in self.plan.tasks}
            return
        self.statuses = {t["task_id"]: t["status"] for t in self.store.tasks(self.run_id)}
        self.failed = "FAILED" in self.statuses.values()
        self.spent = self.store.spent(self.run_id)
        self.ingest_answers()

    def next_ready(self) -> Task | None:
        """The first PENDING task in plan order whose dependencies are done; none once a task
        failed. Reads the statuses the loop keeps, so a step costs the same in a long plan."""
        if self.failed:
            return None
        while self.first < len(self.order) and self.statuses[self.order[self.first].id] in DONE:
            self.first += 1  # tasks before `first` are done: never scanned again
        for task in self.order[self.first :]:
            if self.statuses[task.id] == "PENDING" and all(
                self.statuses[d] in DONE for d in task.depends_on
            ):
                return task
        return None

    def record_process(self, pgid: int) -> None:
        self.store.record_process(self.run_id, pgid, self.attempt_key)

    def exit_code(self) -> int:
        statuses = self.statuses.values()
        if "FAILED" in statuses:
            return EXIT_FAILED
        return EXIT_OK if all(s in DONE for s in statuses) else EXIT_PAUSED

    def emit(self, event: Event) -> None:
        self.bus.emit(event)

    # -- what happens next: one table, applied here -------------------------------------------------
    def transition(
        self,
        task: Task,
        outcome: Outcome,
        finished: Finished | None = None,
        *,
        escalation: asking.EscalationDraft | None = None,
        answer: Applying | None = None,
    ) -> None:
        """Record the outcome's row of the table in one transaction, announce it, then carry out
        its effect."""
        row = finished.row if finished else self.store.task(self.run_id, task.id)
        rule = TABLE[outcome]
        d = finished.decision if finished else None
        values = task_values(
            outcome,
            row,
            failed=finished is not None and finished.failed,
            guidance=answer.guidance if answer else None,
            session_id=finished.session_to_resume if finished else None,
        )
        draft = escalation or (d.escalation if d and outcome == "escalate" else None)
        esc_id = self.store.record(
            self.run_id,
            task.id,
            event_kind="attempt_finished" if finished else ("task_resumed" if answer else outcome),
            payload=finished.payload() if finished else answer.payload(outcome) if answer else {},
            task_values=values,
            attempt=(finished.number, finished.decision.verdict, finished.values())
            if finished
            else None,
            escalation=draft.fields() if draft else None,
        )
        if rule.status is not None:
            self.statuses[task.id] = rule.status
            self.failed = self.failed or rule.status == "FAILED"
        if finished is not None:
            self.spent += finished.result.cost_usd or 0.0
            for event in finished.events(self.run_id, task.id, row):
                self.emit(event)
        if answer is not None:
            self.emit(answer.event(self.run_id, task.id))
        if rule.status in DONE:
            self.finished_task(task, rule.status, outcome, finished)
        opened = self.opened(task, esc_id) if esc_id is not None else None
        if rule.then == "consult" and d is not None:
            for redo in self.consult(task, d):
                self.statuses[redo] = "PENDING"
                self.first = 0
        elif rule.then == "sleep" and d is not None and d.wait_until is not None:
            self.emit(Waiting(self.run_id, task.id, d.wait_until, d.reason))
            time.sleep(max(0.0, d.wait_until - time.time()))
        elif rule.then == "ask_human" and opened is not None:
            self.ask(task, opened)
        elif rule.then == "pause":
            self.current = None
        if rule.stops_run:
            raise RunStopped(outcome)

    def ask(self, task: Task, esc: EscalationRow) -> None:
        self.current = None
        ans = self.wait_for(esc)
        if ans is None:
            self.emit(
                Notice(
                    self.run_id,
                    f"Task {task.id}: PAUSED_FOR_INTERVENTION (escalation {esc['id']})",
                    "yellow",
                    task.id,
                )
            )
            return
        self.current = task.id
        self.apply_answer(task, esc["id"], ans)

    def apply_answer(self, task: Task, esc_id: int, ans: Answer) -> None:
        """A recorded answer, from any channel, becomes the task's next step through the table."""
        esc = self.store.escalation(esc_id)
        assert esc is not None
        kind: str = ans.kind
        actions = esc["detail"].get("actions")
        if kind in ("option", "recommended") and actions:
            idx = next((i for i, o in enumerate(esc["options"]) if ans.text.endswith(o)), None)
            if idx is not None and actions[idx] in ANSWER_OUTCOMES:
                kind = actions[idx]
        if task.checkpoint and kind == "text" and ans.text.strip().lower() == "done":
            kind = "done"
        outcome = ANSWER_OUTCOMES.get(kind, "answer_guidance")
        keep = kind in ("option", "recommended", "text") or (
            kind == "done" and esc["detail"].get("decision")
        )
        guidance = ans.guidance(esc) if keep else None
        self.transition(task, outcome, answer=Applying(esc, ans, kind, guidance))

    # -- one attempt ------------------------------------------------------------------------------------
    def attempt(self, task: Task) -> tuple[Outcome, Finished]:
        row, number = self.store.task_and_next(self.run_id, task.id)
        failures = history.failures_since_resume(self.store, self.run_id, task.id, row)
        options = self.settings.agent_options(task.id, self.agent.name) | {
            k: v
            for k, v in row["overrides"].items()
            if k != "hints"  # hints go into the prompt
        }
        if task.id in self.asked and (
            approved := history.approved_commands(self.store, self.run_id, task.id)
        ):
            options["approved_commands"] = approved
        model = options.get("model")
        gates = [*task.verify, *self.settings.gates.commands]
        resume_session = row["session_id"] if row["guidance"] else None
        prompt = history.attempt_prompt(
            self.store, self.run_id, self.plan, task, row, failures, gates, resume_session
        )
        adir = self.folder / task.id / f"attempt-{number}"
        files = beside(write_text, adir / "prompt.md", prompt)  # while the attempt is recorded
        self.store.begin_attempt(
            self.run_id, task.id, self.folder / task.id, self.agent.name, model, number
        )
        self.attempt_key = (task.id, number)
        self.emit(AttemptStarted(self.run_id, task.id, number, self.agent.name, model))
        files.result()  # before the agent starts

        def on_event(ev: AgentEvent) -> None:
            self.emit(AgentActivity(self.run_id, task.id, number, ev))

        ctx = AttemptContext(
            task=task,
            prompt=prompt,
            prompt_file=adir / "prompt.md",
            workdir=self.workdir,
            artifacts=adir,
            attempt=number,
            run_id=self.run_id,
            timeout=self.settings.attempt_timeout,
            resume_session=resume_session,
            options=options,
            on_event=on_event,
            ask_human=self.ask_now if self.mode != "no-wait" else None,
        )
        result = self.call_agent(ctx)
        if result.transcript_path != adir / "output.txt":  # the command agent wrote it, whole
            (adir / "output.txt").write_text(result.output, encoding="utf-8")
        checks = [] if result.question else self.gates(task, number, gates, adir)
        state = TaskState(failures, row["level"], row["level_attempts"])
        state.backoffs = lambda: history.backoffs(self.store, self.run_id, task.id)
        d = self.judge.decide(task, result, checks, state, max_attempts=self.attempt_cap(task))
        done = Finished(number, d, result, self.agent.name, model, self.attempt_cap(task), row)
        done.checks = checks
        return d.outcome, done

    def gates(self, task: Task, number: int, commands: list[str], adir: Path) -> list[GateResult]:
        results = run_gates(commands, self.workdir, adir / "gates", self.settings.gates.timeout)
        for g in results:
            self.emit(
                GateFinished(
                    self.run_id,
                    task.id,
                    number,
                    g.command,
                    g.exit_code,
                    g.passed,
                    g.duration_s,
                    "" if g.passed else g.summary(8),
                )
            )
        return results

    def call_agent(self, ctx: AttemptContext) -> AgentResult:
        started = time.monotonic()
        try:
            return self.agent.run(ctx)
        except (UserError, KeyboardInterrupt):
            raise
        except Exception as exc:  # an adapter bug must not lose the run: a failed attempt
            (ctx.artifacts / "agent-error.txt").write_text(traceback.format_exc(), encoding="utf-8")
            return AgentResult(
                output="",
                exit_code=1,
                error=f"{type(exc).__name__}: {exc}",
                duration_s=time.monotonic() - started,
            )

    def attempt_cap(self, task: Task) -> int:
        s = self.settings
        return s.max_e2e_fix_attempts if task.is_verification else s.max_attempts

    def finished_task(
        self, task: Task, status: TaskStatusName, reason: str, last: Finished | None = None
    ) -> None:
        self.current = None
        if last is not None and last.number == 1:  # done at the first try: nothing to add up
            duration, cost = last.result.duration_s, last.result.cost_usd
        else:
            spent = [a for a in self.store.attempts(self.run_id, task.id) if a["duration_s"]]
            costs = [a["cost_usd"] for a in spent if a["cost_usd"] is not None]
            duration = sum(a["duration_s"] or 0 for a in spent)
            cost = sum(costs) if costs else None
        self.emit(TaskFinished(self.run_id, task.id, task.title, status, reason, duration, cost))

    def verification_passes(self, task: Task) -> bool:
        """The milestone's own checks run first; the agent is only asked to fix what fails."""
        if self.store.attempts(self.run_id, task.id):
            return False  # already being fixed: the next attempt's gates decide
        folder = self.folder / task.id / "precheck"
        results = run_gates(task.verify, self.workdir, folder, self.settings.gates.timeout)
        failed = [g for g in results if not g.passed]
        if failed:
            self.emit(
                Notice(
                    self.run_id,
                    f"Milestone verification: [bold red]FAILED[/bold red] ({len(failed)} of {len(results)} checks)",
                )
            )
            return False
        self.store.update_task(
            self.run_id,
            task.id,
            "verification_passed",
            {"commands": len(results)},
            status="COMPLETED",
        )
        self.statuses[task.id] = "COMPLETED"
        self.emit(
            Notice(
                self.run_id,
                f"Milestone verification: [bold green]PASSED[/bold green] ({len(results)} checks)",
            )
        )
        self.finished_task(task, "COMPLETED", "verification_passed")
        return True

    def over_budget(self, task: Task) -> tuple[Outcome, asking.EscalationDraft] | None:
        """Spending caps from recorded costs: reaching one pauses the task as an escalation."""
        task_cap = self.settings.agent_options(task.id, self.agent.name).get("max_budget_usd")
        run_cap = self.settings.max_budget_usd
        if run_cap is not None and self.spent >= run_cap:
            return "budget_run", asking.budget_spent(
                "run", self.spent, run_cap, fmt_cost(run_cap), fmt_cost(self.spent)
            )
        if task_cap is not None and (on_task := self.store.spent(self.run_id, task.id)) >= task_cap:
            return "budget_task", asking.budget_spent(
                "task", on_task, task_cap, fmt_cost(task_cap), fmt_cost(on_task)
            )
        return None

    # -- humans -------------------------------------------------------------------------------------
    def opened(self, task: Task, esc_id: int) -> EscalationRow:
        """Every escalation, whoever asked, is announced here: its files, its events."""
        from orchestrator.consultant import build_hil_request

        esc = self.store.escalation(esc_id)
        assert esc is not None
        self.asked.add(task.id)
        consultant = [
            e
            for e in self.store.events(self.run_id, "consultant_decision")
            if e["task_id"] == task.id
        ]
        request = build_hil_request(
            run_id=self.run_id,
            task=task,
            attempts=self.store.attempts(self.run_id, task.id),
            escalation=esc,
            consultant=consultant[-1]["payload"] if consultant else None,
        )
        self.emit(EscalationOpened(self.run_id, task.id, esc, request, self.mode))
        return esc

    def wait_for(self, esc: EscalationRow) -> Answer | None:
        if self.mode == "terminal" and self.ask_terminal is not None:
            ans: Answer = self.ask_terminal(esc)
            record_answer(self.store, esc["id"], ans, channel="terminal")
            return ans
        if self.mode == "wait":
            row = wait_for_answer(self.store, esc["id"], check_files=self.ingest_decision_files)
            assert row is not None  # no timeout: --wait blocks until someone answers (or Ctrl-C)
            return Answer(row["response_kind"], row["response"])  # type: ignore[arg-type]
        return None

    def ask_now(self, q: HumanQuestion) -> str | None:
        """An agent asking mid-attempt (AskUserQuestion, a held command) while a human is present."""
        task = self.plan.task(self.current) if self.current else None
        if task is None:
            return None
        esc_id = self.store.record(
            self.run_id,
            task.id,
            event_kind="live_question",
            payload={},
            task_values={},
            escalation=asking.agent_question(q, live=True).fields(),
        )
        assert esc_id is not None
        esc = self.opened(task, esc_id)
        ans = self.wait_for(esc)
        if ans is None:
            return None
        esc = self.store.escalation(esc_id) or esc
        self.emit(
            EscalationAnswered(
                self.run_id,
                task.id,
                esc_id,
                ans.text,
                ans.kind,
                "answer_agent",
                esc["responder"],
                esc["channel"],
                esc["wait_s"],
            )
        )
        return ans.plain

    def ingest_answers(self) -> None:
        """At (re)start: answers given while nobody was running become the tasks' next step."""
        latest: dict[str, EscalationRow] = {}
        for esc in self.store.escalations(self.run_id):
            latest[esc["task_id"]] = esc
        self.asked = set(latest)
        for task_id, esc in latest.items():
            if (
                esc["status"] == "answered"
                and self.statuses.get(task_id) == "PAUSED_FOR_INTERVENTION"
            ):
                ans = Answer(esc["response_kind"], esc["response"] or "")  # type: ignore[arg-type]
                self.apply_answer(self.plan.task(task_id), esc["id"], ans)

    def ingest_decision_files(self) -> None:
        from orchestrator.humans import read_user_decision
        from orchestrator.observers.files import level2_for

        for esc in self.store.escalations(self.run_id, open_only=True):
            folder = level2_for(self.folder / esc["task_id"] / "escalation", esc["id"])
            if folder is None:
                continue
            answer = read_user_decision(folder / "user-decision.json", esc)
            if answer is not None:
                record_answer(self.store, esc["id"], answer, channel="file")
