"""The run loop: pick the next ready task, attempt it, judge, record, repeat.

Everything the loop knows comes from the store, so `resume` is simply the same loop started
again: interrupted attempts are marked, answered questions are applied, and completed tasks are
never run twice.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.agents.base import Agent, AgentResult, AttemptContext, HumanQuestion
from orchestrator.config import Settings
from orchestrator.console import Reporter, fmt_cost
from orchestrator.gates import run_gates
from orchestrator.humans import (
    Answer,
    ask_in_terminal,
    read_user_decision,
    record_answer,
    render_panel,
    strip_letter,
    wait_for_answer,
)
from orchestrator.judge import HUMAN_OPTIONS, Decision, Judge, TaskState
from orchestrator.ladder import RunHooks, level2_for
from orchestrator.models import VERIFICATION_KIND, Plan, Task, TaskStatus, UserError
from orchestrator.plans import order
from orchestrator.prompt import build_prompt
from orchestrator.store import Row, Store

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PAUSED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
logger = logging.getLogger("orchestrator.runner")
DONE = {TaskStatus.COMPLETED.value, TaskStatus.SKIPPED.value}


@dataclass
class RunOutcome:
    run_id: str
    exit_code: int
    statuses: dict[str, str]


def run_folder(settings_json: dict[str, Any], run_id: str) -> Path:
    return Path(settings_json["state_dir"]) / "runs" / run_id


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")


class Runner:
    def __init__(
        self,
        store: Store,
        run_id: str,
        settings: Settings,
        agent: Agent,
        *,
        reporter: Reporter | None = None,
        interactive: bool | None = None,
        judge: Judge | None = None,
        hooks: RunHooks | None = None,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.settings = settings
        self.agent = agent
        self.report = reporter or Reporter()
        run = store.run(run_id)
        assert run is not None
        self.meta: dict[str, Any] = json.loads(run["settings_json"])
        self.plan: Plan = store.plan(run_id)
        self.workdir = Path(run["workdir"])
        self.folder = run_folder(self.meta, run_id)
        if interactive is None:
            interactive = sys.stdin.isatty() and sys.stdout.isatty()
        self.mode = (
            settings.wait if settings.wait != "auto" else ("terminal" if interactive else "no-wait")
        )
        self.judge = judge or Judge(settings)
        self.hooks = hooks  # checkpoints / consultant seam (set by the api module)
        self.aborted = False
        self.stopped = False
        self.current_task: str | None = None
        """The task whose attempt is under way, for questions the agent asks mid-attempt."""

    # -- the loop -------------------------------------------------------------------------------
    def execute(self) -> RunOutcome:
        token = self.store.acquire_lock(self.run_id)
        beat = _Heartbeat(self.store, self.run_id, token)
        started = time.monotonic()
        try:
            self.store.set_run_status(self.run_id, "RUNNING")
            for cut in self.store.recover_interrupted(self.run_id):
                self.report.line(
                    f"Task {cut['task_id']}: attempt {cut['number']} was interrupted; running it again",
                    "yellow",
                )
            self.ingest_answers()
            while not (self.aborted or self.stopped) and (task := self.next_ready()) is not None:
                self.run_task(task)
            code = self.exit_code()
            self.store.set_run_status(self.run_id, {0: "COMPLETED", 1: "FAILED", 3: "PAUSED"}[code])
        except KeyboardInterrupt:
            self.store.recover_interrupted(self.run_id)
            self.store.set_run_status(self.run_id, "INTERRUPTED")
            self.report.line(
                f"Interrupted. Continue with: orchestrator resume {self.run_id}", "yellow"
            )
            code = EXIT_INTERRUPTED
        finally:
            beat.stop()
            self.store.release_lock(self.run_id, token)
        self.summary(time.monotonic() - started)
        if code == EXIT_PAUSED:
            self.report.line(
                f"Waiting for a human: `orchestrator escalations`, `orchestrator answer ID …`, "
                f"then `orchestrator resume {self.run_id}`",
                "yellow",
            )
        return RunOutcome(
            self.run_id, code, {t["task_id"]: t["status"] for t in self.store.tasks(self.run_id)}
        )

    def next_ready(self) -> Task | None:
        rows = {t["task_id"]: t for t in self.store.tasks(self.run_id)}
        if any(r["status"] == TaskStatus.FAILED.value for r in rows.values()):
            return None  # a failed task stops the run
        for task in order(self.plan):
            row = rows[task.id]
            if row["status"] == TaskStatus.PENDING.value and all(
                rows[d]["status"] in DONE for d in task.depends_on
            ):
                return task
        return None

    def exit_code(self) -> int:
        statuses = [t["status"] for t in self.store.tasks(self.run_id)]
        if self.aborted or TaskStatus.FAILED.value in statuses:
            return EXIT_FAILED
        if all(s in DONE for s in statuses):
            return EXIT_OK
        return EXIT_PAUSED

    # -- one task ---------------------------------------------------------------------------------
    def run_task(self, task: Task) -> None:
        self.report.task_started(task.id, task.title)
        if task.checkpoint:
            self.human_checkpoint(task)
            return
        if task.is_verification and self.verification_passes(task):
            return
        while True:
            row = self.store.task(self.run_id, task.id)
            if row["status"] != TaskStatus.PENDING.value or self.over_budget(task):
                return
            decision, number, result = self.attempt(task, row)
            if not self.after(task, row, decision, number, result):
                return

    def attempt_cap(self, task: Task) -> int:
        return (
            self.settings.max_e2e_fix_attempts
            if task.is_verification
            else self.settings.max_attempts
        )

    def verification_passes(self, task: Task) -> bool:
        """The milestone's own checks run first; the agent is only asked to fix what fails."""
        if self.store.attempts(self.run_id, task.id):
            return False  # already being fixed: the next attempt's gates decide
        folder = self.folder / task.id / "precheck"
        results = run_gates(task.verify, self.workdir, folder, self.settings.gates.timeout)
        if all(g.passed for g in results):
            self.store.update_task(
                self.run_id,
                task.id,
                "verification_passed",
                {"commands": len(results)},
                status=TaskStatus.COMPLETED.value,
            )
            self.report.line(
                f"Milestone verification: [bold green]PASSED[/bold green] ({len(results)} checks)"
            )
            return True
        failed = [g for g in results if not g.passed]
        self.report.line(
            f"Milestone verification: [bold red]FAILED[/bold red] ({len(failed)} of {len(results)} checks)"
        )
        return False

    def over_budget(self, task: Task) -> bool:
        """Spending caps from recorded costs: reaching one pauses the task as an escalation, never a crash."""
        spent = self.store.attempts(self.run_id)
        total = sum(a["cost_usd"] or 0 for a in spent)
        on_task = sum(a["cost_usd"] or 0 for a in spent if a["task_id"] == task.id)
        task_cap = self.settings.agent_options(task.id, self.agent.name).get("max_budget_usd")
        for scope, cost, cap in (
            ("run", total, self.settings.max_budget_usd),
            ("task", on_task, task_cap),
        ):
            if cap is not None and cost >= cap:
                esc_id = self.store.open_escalation(
                    self.run_id,
                    task.id,
                    question=f"The {scope} budget of {fmt_cost(cap)} is spent ({fmt_cost(cost)} recorded). "
                    "Raise it and retry, skip this task, or abort?",
                    options=list(HUMAN_OPTIONS),
                    why="Spending more money needs your approval.",
                    level=2,
                    detail={
                        "asker": "The orchestrator",
                        "actions": ["retry", "skip", "abort"],
                        "budget": scope,
                        "spent_usd": cost,
                        "cap_usd": cap,
                    },
                )
                self.report.line(
                    f"BUDGET REACHED: {scope} cap {fmt_cost(cap)}, spent {fmt_cost(cost)}",
                    "bold yellow",
                )
                self.report.note(
                    f"Answer escalation {esc_id} with --retry and resume with a higher --max-budget-usd "
                    "(run) or [claude] max_budget_usd (task), or --skip / --abort."
                )
                if scope == "run":
                    self.stopped = True  # no other task may spend either
                return True
        return False

    def attempt(self, task: Task, row: Row) -> tuple[Decision, int, AgentResult]:
        history = self.failures_since_resume(task.id, row)
        consultant = self.meta.get("task_overrides", {}).get(task.id, {})
        options = self.settings.agent_options(task.id, self.agent.name) | {
            k: v
            for k, v in consultant.items()
            if k != "hints"  # hints go into the prompt
        }
        approved = self.approved_commands(task.id)
        if approved:
            options["approved_commands"] = approved
        self.current_task = task.id
        number = self.store.begin_attempt(
            self.run_id, task.id, self.folder / task.id, self.agent.name, options.get("model")
        )
        adir = self.folder / task.id / f"attempt-{number}"
        adir.mkdir(parents=True, exist_ok=True)
        gates = [*task.verify, *self.settings.gates.commands]
        resume_session = row["session_id"] if row["guidance"] else None
        prompt = self.prompt(task, row, history, gates, resume_session)
        (adir / "prompt.md").write_text(prompt, encoding="utf-8")
        self.report.invoking(self.agent.name)
        with self.report.live(f"attempt {number}") as on_event:
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
        (adir / "output.txt").write_text(result.output, encoding="utf-8")
        checks = (
            []
            if result.question
            else run_gates(gates, self.workdir, adir / "gates", self.settings.gates.timeout)
        )
        state = TaskState(history, row["level"], row["level_attempts"])
        decision = self.judge.decide(
            task, result, checks, state, max_attempts=self.attempt_cap(task)
        )
        write_json(
            adir / "decision.json",
            {
                "action": decision.action,
                "verdict": decision.verdict,
                "reason": decision.reason,
                "guidance": decision.guidance,
                "gates": [
                    {"command": g.command, "exit_code": g.exit_code, "log": str(g.log_path)}
                    for g in checks
                ],
            },
        )
        return decision, number, result

    def call_agent(self, ctx: AttemptContext) -> AgentResult:
        started = time.monotonic()
        try:
            return self.agent.run(ctx)
        except (UserError, KeyboardInterrupt):
            raise
        except (
            Exception
        ) as exc:  # an adapter bug must not lose the run: record it as a failed attempt
            (ctx.artifacts / "agent-error.txt").write_text(traceback.format_exc(), encoding="utf-8")
            return AgentResult(
                output="",
                exit_code=1,
                error=f"{type(exc).__name__}: {exc}",
                duration_s=time.monotonic() - started,
            )

    def after(self, task: Task, row: Row, d: Decision, number: int, result: AgentResult) -> bool:
        """Record the decision; True when the task should be attempted again right away."""
        failed = d.verdict == "failed"
        values: dict[str, Any] = {
            "attempts_since_resume": row["attempts_since_resume"] + (1 if failed else 0),
            "level_attempts": row["level_attempts"] + (1 if failed else 0),
            "session_id": result.session_id if d.action == "escalate" and result.question else None,
        }
        if d.action == "complete":
            values["status"] = TaskStatus.COMPLETED.value
        elif d.action in ("retry", "consult"):
            values["status"] = TaskStatus.PENDING.value
        attempt_values = {
            "exit_code": result.exit_code,
            "cost_usd": result.cost_usd,
            "tokens_in": result.tokens_in,
            "tokens_out": result.tokens_out,
            "turns": result.turns,
            "session_id": result.session_id,
            "error_summary": d.error_summary,
            "decision": d.action,
            "guidance": d.guidance,
        }
        esc_id = self.store.finish_attempt(
            self.run_id,
            task.id,
            number,
            verdict=d.verdict,
            result=attempt_values,
            task_values=values,
            event_kind="attempt_finished",
            payload={
                "action": d.action,
                "reason": d.reason,
                "loop": d.loop.kind if d.loop else None,
            },
            escalation=d.escalation.fields() if d.escalation and d.action == "escalate" else None,
        )
        if d.action == "complete":
            spent = [a for a in self.store.attempts(self.run_id, task.id) if a["duration_s"]]
            cost = [a["cost_usd"] for a in spent if a["cost_usd"] is not None]
            self.report.completed(
                task.id, sum(a["duration_s"] for a in spent), sum(cost) if cost else None
            )
            if self.hooks is not None:
                self.hooks.task_completed(self, task)
            return False
        if failed and d.headline != "NEEDS HUMAN INPUT":
            limit = self.attempt_cap(task)
            self.report.failed(
                task.id, row["level_attempts"] + 1, limit, d.error_summary or d.reason, row["level"]
            )
        if d.action == "retry":
            self.report.retrying(task.id, d.guidance)
            return True
        if d.action == "wait":
            pause = max(0.0, (d.wait_until or 0) - time.time())
            self.report.line(
                f"Task {task.id}: {d.reason}; waiting {pause:.0f}s instead of burning attempts",
                "yellow",
            )
            time.sleep(pause)
            return True
        if d.action == "consult":
            self.report.line(d.headline or "ESCALATING", "bold yellow")
            if self.hooks is None:
                raise RuntimeError("the consultant needs the run hooks")
            self.hooks.consult(self, task, d)
            return True
        assert esc_id is not None
        return self.escalated(task, esc_id, d)

    # -- humans -------------------------------------------------------------------------------------
    def escalated(self, task: Task, esc_id: int, d: Decision) -> bool:
        self.report.line(d.headline or "NEEDS HUMAN INPUT", "bold yellow")
        if d.loop is not None:
            self.report.line("Stopping to prevent resource waste.", "yellow")
            self.report.console.print(
                f"\n{d.loop.similarity_line}\nPlease investigate and provide guidance.\n"
            )
        esc = self.store.escalation(esc_id)
        assert esc is not None
        if self.hooks is not None:
            hil = self.hooks.escalation_opened(self, task, esc)
            if (
                esc["detail"].get("asker") == "The orchestrator"
            ):  # level 2 after failures: the analysis
                self.report_analysis(hil)
        answer = self.wait_for(esc)
        if answer is None:
            self.report.line(
                f"Task {task.id}: PAUSED_FOR_INTERVENTION (escalation {esc_id})", "yellow"
            )
            return False
        return self.apply(task, esc_id, answer)

    def report_analysis(self, hil: dict[str, Any]) -> None:
        """Seed 002's level-2 summary: what was spent, what was tried, what the consultant learnt."""
        summary, analysis = hil.get("summary", {}), hil.get("consultant_analysis", {})
        spent = (
            f"Spent: {summary.get('total_attempts')} attempts, {summary.get('time_spent_minutes')} min, "
            f"{fmt_cost(summary.get('cost_usd'))}; models tried: {', '.join(summary.get('models_tried') or []) or '-'}; "
            f"consultant interventions: {summary.get('level_1_interventions', 0)}"
        )
        self.report.note(spent)
        for key in ("suspected_cause", "learning"):
            if analysis.get(key):
                self.report.note(f"{key.replace('_', ' ').capitalize()}: {analysis[key]}"[:400])

    def wait_for(self, esc: Row) -> Answer | None:
        if self.mode != "terminal":  # in a terminal the prompt below shows the same panel
            then = (
                "this run goes on by itself"
                if self.mode == "wait"
                else f"then: orchestrator resume {self.run_id}"
            )
            how = (
                f"Answer: orchestrator answer {esc['id']} (TEXT | --option X | --recommended | --retry "
                f"| --skip | --abort); {then}"
            )
            render_panel(self.report.console, esc, esc["task_id"], how=how)
        if self.mode == "terminal":
            answer = ask_in_terminal(self.report.console, esc)
            record_answer(self.store, esc["id"], answer, channel="terminal")
            return answer
        if self.mode == "wait":
            self.report.note(f"Waiting for an answer: orchestrator answer {esc['id']} …")
            row = wait_for_answer(self.store, esc["id"], check_files=self.ingest_decision_files)
            assert row is not None  # no timeout: --wait blocks until someone answers (or Ctrl-C)
            return Answer(row["response_kind"], row["response"])
        return None

    def ask_now(self, q: HumanQuestion) -> str | None:
        """An agent asking mid-attempt (AskUserQuestion, a held command) while a human is present."""
        running = self.current_task
        if running is None:
            return None
        esc_id = self.store.open_escalation(
            self.run_id,
            running,
            question=q.question,
            options=q.options,
            recommendation=q.recommendation,
            category=q.category,
            why=q.why,
            level=2,
            detail={**q.detail, "asker": "The agent", "live": True},
            pause_task=False,
        )
        esc = self.store.escalation(esc_id)
        assert esc is not None
        self.report.line("NEEDS HUMAN INPUT", "bold yellow")
        answer = self.wait_for(esc)
        return None if answer is None else answer.plain

    def apply(self, task: Task, esc_id: int, answer: Answer) -> bool:
        """Act on a recorded answer; True when the task should be attempted again."""
        esc = self.store.escalation(esc_id)
        assert esc is not None
        kind: str = answer.kind
        actions = esc["detail"].get("actions")
        if kind in ("option", "recommended") and actions:
            idx = next((i for i, o in enumerate(esc["options"]) if answer.text.endswith(o)), None)
            if idx is not None and actions[idx] in ("retry", "skip", "abort", "done"):
                kind = actions[idx]
        if self.hooks is not None:
            self.hooks.answer_applied(self, task, esc, kind)
        if kind == "done" or (task.checkpoint and answer.text.strip().lower() == "done"):
            self.store.resume_task(
                self.run_id,
                task.id,
                guidance=None,
                status=TaskStatus.COMPLETED,
                reason="checkpoint_done",
            )
            self.report.completed(task.id, 0, None)
            return False
        if kind == "skip":
            self.store.resume_task(
                self.run_id, task.id, guidance=None, status=TaskStatus.SKIPPED, reason="human_skip"
            )
            self.report.line(f"Task {task.id}: SKIPPED by a human")
            return False
        if kind == "abort":
            self.store.resume_task(
                self.run_id, task.id, guidance=None, status=TaskStatus.FAILED, reason="human_abort"
            )
            self.report.line(f"Task {task.id}: run aborted by a human", "red")
            self.aborted = True
            return False
        row = self.store.task(self.run_id, task.id)
        guidance = answer.guidance(esc) if kind != "retry" else None
        merged = "\n".join(x for x in (row["guidance"], guidance) if x) or None
        self.store.resume_task(self.run_id, task.id, guidance=merged, reason=f"human_{kind}")
        self.report.line(
            f"Resuming Task {task.id} with guidance..."
            if guidance
            else f"Retrying Task {task.id}..."
        )
        return True

    def ingest_answers(self) -> None:
        """At (re)start: answers given while nobody was running become the tasks' next step."""
        self.ingest_decision_files()
        for esc in self.store.escalations(self.run_id):
            if esc["status"] != "answered":
                continue
            row = self.store.task(self.run_id, esc["task_id"])
            latest = [
                e for e in self.store.escalations(self.run_id) if e["task_id"] == esc["task_id"]
            ][-1]
            if (
                row["status"] == TaskStatus.PAUSED_FOR_INTERVENTION.value
                and latest["id"] == esc["id"]
            ):
                self.apply(
                    self.plan.task(esc["task_id"]),
                    esc["id"],
                    Answer(esc["response_kind"], esc["response"]),
                )

    def ingest_decision_files(self) -> None:
        for esc in self.store.escalations(self.run_id, open_only=True):
            folder = level2_for(self.folder / esc["task_id"] / "escalation", esc["id"])
            if folder is None:
                continue
            answer = read_user_decision(folder / "user-decision.json", esc)
            if answer is not None:
                record_answer(self.store, esc["id"], answer, channel="file")

    def human_checkpoint(self, task: Task) -> None:
        """GSD `checkpoint:*` tasks are done by a person; the run asks and waits like any escalation."""
        esc_id = self.store.open_escalation(
            self.run_id,
            task.id,
            question=f"Human checkpoint: {task.title}\n\n{task.body.strip()[:1500]}",
            options=["Done - continue", "Skip this task", "Abort the run"],
            recommendation=None,
            category=None,
            why="This task is a human checkpoint in the plan.",
            level=2,
            detail={"asker": "The plan", "actions": ["done", "skip", "abort"]},
        )
        esc = self.store.escalation(esc_id)
        assert esc is not None
        answer = self.wait_for(esc)
        if answer is not None:
            self.apply(task, esc_id, answer)

    def approved_commands(self, task_id: str) -> list[str]:
        """Held commands a human allowed; the agent may run exactly these next time."""
        from orchestrator.policy import is_approval

        return [
            str(e["detail"]["command"])
            for e in self.store.escalations(self.run_id)
            if e["task_id"] == task_id
            and e["status"] == "answered"
            and e["category"] == "extreme_destructive"
            and e["detail"].get("command")
            and is_approval(strip_letter(e["response"]))
        ]

    # -- prompts and history ----------------------------------------------------------------------
    def failures_since_resume(self, task_id: str, row: Row) -> list[str]:
        n = row["attempts_since_resume"]
        if n <= 0:
            return []
        failed = [a for a in self.store.attempts(self.run_id, task_id) if a["verdict"] == "failed"]
        return [a["error_summary"] or "" for a in failed[-n:]]

    def prompt(
        self, task: Task, row: Row, history: list[str], gates: list[str], resume: str | None
    ) -> str:
        last = self.store.attempts(self.run_id, task.id)
        feedback = [f"Attempt {i}:\n{_tail(err, 3000)}" for i, err in enumerate(history[-3:], 1)]
        guidance = [g for g in (row["guidance"] or "").splitlines() if g.strip()]
        brain = next((a["guidance"] for a in reversed(last) if a["verdict"] == "failed"), None)
        if brain and history:
            guidance.append(brain)
        extra = self.meta.get("task_overrides", {}).get(task.id, {}).get("hints", [])
        guidance += extra
        if resume and guidance:
            return "\n".join(guidance) + "\n\nContinue the task with this answer.\n"
        return build_prompt(task, feedback=feedback, guidance=guidance, gates=gates)

    def summary(self, elapsed: float) -> None:
        rows = []
        by_task: dict[str, list[Row]] = {}
        for a in self.store.attempts(self.run_id):
            by_task.setdefault(a["task_id"], []).append(a)
        for t in self.store.tasks(self.run_id):
            att = by_task.get(t["task_id"], [])
            costs = [a["cost_usd"] for a in att if a["cost_usd"] is not None]
            rows.append(
                {
                    "task_id": t["task_id"],
                    "title": t["title"],
                    "status": t["status"],
                    "attempts": len(att),
                    "duration_s": sum(a["duration_s"] or 0 for a in att),
                    "cost_usd": sum(costs) if costs else None,
                }
            )
        self.report.summary(rows, elapsed)


def with_verification(plan: Plan) -> Plan:
    """The plan's milestone verification becomes a last task that depends on all others, so it gets
    attempts, loop detection, escalation and resume like any task (fix attempts: max_e2e_fix_attempts)."""
    if not plan.verification:
        return plan
    ids = {t.id for t in plan.tasks}
    task_id = next(x for x in ("E2E", "E2E-verification", "milestone-verification") if x not in ids)
    body = (
        "All tasks of this milestone are done, but the milestone verification fails. Find the cause "
        "and fix it without breaking what the earlier tasks built. The checks:\n"
        + "\n".join(f"- `{c}`" for c in plan.verification)
    )
    final = Task(
        id=task_id,
        title="Milestone verification",
        type="VERIFICATION",
        body=body,
        verify=list(plan.verification),
        depends_on=[t.id for t in plan.tasks],
        source=plan.path,
        extra={"kind": VERIFICATION_KIND},
    )
    return plan.model_copy(update={"tasks": [*plan.tasks, final]})


def _tail(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


class _Heartbeat:
    """Keeps the run lock fresh during long attempts, so other hosts can tell a live runner from a dead one."""

    def __init__(self, store: Store, run_id: str, token: str, every: float = 30.0) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._beat, args=(store, run_id, token, every), daemon=True
        )
        self._thread.start()

    def _beat(self, store: Store, run_id: str, token: str, every: float) -> None:
        while not self._stop.wait(every):
            try:
                store.heartbeat(run_id, token)
            except Exception as exc:  # a missed heartbeat only makes the lock look older
                logger.debug("heartbeat failed: %s", exc)

    def stop(self) -> None:
        self._stop.set()
