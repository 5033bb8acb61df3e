"""Level 1 of the escalation ladder (seed 002): what changes for the next attempts of a task that
failed `max_task_attempts` times — another model, a revert to an earlier task's checkpoint, hints
drawn from the errors, tighter acceptance criteria.

The rules below decide offline; an optional LLM may refine their answer, and when it fails or
answers nonsense the rules' decision stands. The failure text is read by `orchestrator.rules`.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from orchestrator.consultant.decision import (
    ACCEPTANCE_KEY,
    Analysis,
    ConsultantDecision,
    DecisionBody,
    ModelSwitch,
    PlanRevert,
)
from orchestrator.llm import LLMBackend, extract_json
from orchestrator.models import Task
from orchestrator.rules.failure import (
    error_signature,
    failing_gates,
    failing_tests,
    key_error_line,
    normalise_error,
)
from orchestrator.rules.hints import consultant_hint

__all__ = ["CONSULTANT_PROMPT", "Reading", "consult", "failed_attempts"]

logger = logging.getLogger("orchestrator.consultant")

ERROR_TAIL_CHARS = 4_000
"""Each attempt's error text in the LLM prompt is cut to its tail."""

_TEST_FILE = re.compile(
    r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*$|_test\.\w+$|\.(test|spec)\.\w+$|conftest\.py$"
)
_GENERIC_NAMES = {"__init__.py", "__main__.py", "index.js", "index.ts", "main.py", "setup.py"}


def _clean(line: str, limit: int = 200) -> str:
    line = " ".join(line.strip().split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- reading the attempts -------------------------------------------------------------------------
def _error_text(attempt: Mapping[str, Any]) -> str:
    return str(attempt.get("error_summary") or "")


def failed_attempts(attempts: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [a for a in attempts if a.get("verdict") != "completed"]


class Reading:
    """What the attempts' errors say, shared by the decision and the human request."""

    def __init__(self, attempts: Sequence[Mapping[str, Any]]) -> None:
        self.attempts = failed_attempts(attempts)
        self.texts = [_error_text(a) for a in self.attempts]
        self.keys = [key_error_line(t) for t in self.texts]
        groups: Counter[str] = Counter()
        latest: dict[str, str] = {}
        for k in self.keys:
            if k:
                norm = normalise_error(k)
                groups[norm] += 1
                latest[norm] = k
        self.top: str | None = None
        self.top_count = 0
        if groups:
            # Most frequent; among equals the most recent, which is what the agent faces now.
            order = [normalise_error(k) for k in self.keys if k]
            norm, count = max(groups.items(), key=lambda kv: (kv[1], _last_index(order, kv[0])))
            self.top, self.top_count = latest[norm], count
        self.distinct = len(groups)
        joined = "\n".join(self.texts)
        self.signature = error_signature(self.texts[-1]) if self.texts else None
        self.gates = _by_frequency(g for t in self.texts for g in failing_gates(t))
        self.gates += [
            str(g)
            for a in self.attempts
            for g in (a.get("failed_gates") or [])
            if str(g) not in self.gates
        ]
        self.tests = failing_tests(joined)
        self.models = list(dict.fromkeys(str(a["model"]) for a in self.attempts if a.get("model")))

    @property
    def repeated(self) -> bool:
        return self.top_count >= 2 and self.top_count * 2 > len(self.attempts)


def _last_index(items: list[str], value: str) -> int:
    return max(i for i, v in enumerate(items) if v == value)


def _by_frequency(items: Iterable[str]) -> list[str]:
    counts = Counter(items)
    return [k for k, _ in counts.most_common()]


# -- the rules ------------------------------------------------------------------------------------
def _mentions(text: str, path: str, unique_names: set[str]) -> bool:
    norm = text.replace("\\", "/")
    clean = PurePosixPath(path.replace("\\", "/")).as_posix().lstrip("./")
    if re.search(rf"(?<![\w.-]){re.escape(clean)}(?![\w-])", norm):
        return True
    name = PurePosixPath(clean).name
    if name in unique_names:
        return bool(re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", norm))
    return False


def _implicated_task(
    task: Task,
    reading: Reading,
    completed_tasks: Sequence[str],
    earlier_tasks: Sequence[Task],
) -> tuple[Task, list[str]] | None:
    """The earliest completed task whose (non-test) files the errors of most attempts name."""
    own = {p.lstrip("./") for p in task.files}
    candidates = [t for t in earlier_tasks if t.id in completed_tasks and t.id != task.id]
    names = Counter(
        PurePosixPath(p.replace("\\", "/")).name for t in [task, *candidates] for p in t.files
    )
    unique = {n for n, c in names.items() if c == 1 and n not in _GENERIC_NAMES}
    needed = max(1, (len(reading.texts) + 1) // 2)
    order = {tid: i for i, tid in enumerate(completed_tasks)}
    hits: list[tuple[int, Task, list[str]]] = []
    for t in candidates:
        files = [
            p
            for p in t.files
            if p.lstrip("./") not in own and not _TEST_FILE.search(p.replace("\\", "/"))
        ]
        named = [p for p in files if sum(_mentions(x, p, unique) for x in reading.texts) >= needed]
        if named:
            hits.append((order.get(t.id, len(order)), t, named))
    if not hits:
        return None
    _, found, named = min(hits, key=lambda h: h[0])
    return found, named


def _criteria(task: Task, reading: Reading) -> list[str]:
    out: list[str] = []
    for cmd in reading.gates:
        out.append(f"`{cmd}` must pass")
    for test in reading.tests:
        cmd = f"pytest -q {test}" if test.endswith(".py") else test
        out.append(f"`{cmd}` must pass")
    if reading.top and (reading.top.startswith("assert") or "AssertionError" in reading.top):
        assertion = re.sub(r"^(?:\w+\.)*AssertionError:\s*(?=assert\b)", "", reading.top)
        out.append(f"The assertion `{assertion}` must hold")
    for cmd in task.verify:
        if any(cmd in t for t in reading.texts):
            out.append(f"`{cmd}` must pass")
    existing = {c.strip().lower() for c in task.acceptance_criteria}
    return [c for c in dict.fromkeys(out) if c.lower() not in existing]


def _rules(
    task: Task,
    attempts: Sequence[Mapping[str, Any]],
    completed_tasks: Sequence[str],
    current_model: str | None,
    fallback_model: str | None,
    earlier_tasks: Sequence[Task],
) -> ConsultantDecision:
    r = Reading(attempts)
    n = len(r.attempts)
    title = f"Task {task.id} ({task.title})"

    if r.top is None:
        summary = f"{title} failed {n} times without an error message"
        cause = "Unknown: the attempts left no error text; the agent may have stopped early."
    elif r.repeated:
        summary = f"{title} failed {n} times; {r.top_count} of them with `{r.top}`"
        cause = (
            f"The same failure recurred in {r.top_count} of {n} attempts (`{r.top}`): the "
            "approach is not converging, retrying it unchanged will fail again."
        )
    else:
        summary = f"{title} failed {n} times with {r.distinct} different errors; last: `{r.top}`"
        cause = (
            f"Each attempt fixed one thing and broke another (last error `{r.top}`): the "
            "agent lacks a clear target."
        )

    switch: ModelSwitch | None = None
    if fallback_model and fallback_model != current_model:
        source = current_model or "default"
        switch = ModelSwitch.model_validate(
            {
                "from": source,
                "to": fallback_model,
                "reasoning": f"{source} failed {n} times"
                + (" the same way" if r.repeated else "")
                + f"; {fallback_model} may take a different approach.",
            }
        )

    revert = PlanRevert(current_task=task.id)
    implicated = _implicated_task(task, r, completed_tasks, earlier_tasks)
    if implicated:
        culprit, files = implicated
        revert = PlanRevert(
            enabled=True,
            revert_to_task=culprit.id,
            current_task=task.id,
            reasoning=(
                f"The errors point at {', '.join(files)}, written by task {culprit.id} "
                f"({culprit.title}): redo it and the tasks after it rather than patching around it."
            ),
        )

    hints: list[str] = []
    if r.top:
        seen = f" (seen in {r.top_count} of {n} attempts)" if r.top_count > 1 else ""
        hints.append(f"The failing check is `{r.top}`{seen}: make exactly this pass.")
    if r.tests:
        hints.append(
            f"Read the failing test ({', '.join(r.tests[:3])}) before changing code: it is the "
            "specification."
        )
    if r.tests or any("test" in g for g in r.gates):
        hints.append("Do not edit the tests to make them pass; change the code under test.")
    specific = consultant_hint(r.signature, r.top)
    if specific:
        hints.append(specific)
    if r.repeated:
        hints.append(
            "The previous attempts repeated one approach and got the same error: take a "
            "different approach instead of another variation of it."
        )
    elif r.distinct > 1:
        hints.append(
            "Fix one error at a time and re-run the checks after each change, so an earlier fix "
            "is not undone."
        )
    for cmd in _commands_to_run(r, task):
        hints.append(f"Before finishing, run `{cmd}` yourself and make sure it passes.")
    if implicated:
        hints.append(
            f"Task {implicated[0].id}'s work was rolled back: redo "
            f"{', '.join(implicated[1])} so it fits what task {task.id} needs."
        )

    criteria = _criteria(task, r)
    confidence = 0.3 if r.top is None else 0.5
    confidence += 0.1 if switch else 0.0
    confidence += 0.1 if implicated else 0.0
    confidence += 0.05 if criteria else 0.0
    changes = [
        f"model {switch.to}" if switch else "",
        f"a restart from task {revert.revert_to_task}" if revert.enabled else "",
        "concrete hints" if hints else "",
        "explicit acceptance criteria" if criteria else "",
    ]
    changed = ", ".join(c for c in changes if c) or "a fresh attempt"
    target = f" get past `{r.top}`" if r.top else " complete the task"
    return ConsultantDecision(
        analysis=Analysis(failure_summary=summary, root_cause=cause, attempts_analyzed=n),
        decision=DecisionBody(
            model_switch=switch,
            plan_revert=revert,
            additional_hints=hints,
            spec_updates={ACCEPTANCE_KEY: criteria} if criteria else {},
        ),
        expected_outcome=f"With {changed}, the next attempts should{target}.",
        confidence=round(min(confidence, 0.8), 2),
    )


def _commands_to_run(reading: Reading, task: Task) -> list[str]:
    """The gate commands to run before finishing: the failing ones, else the task's own."""
    return (reading.gates or list(task.verify))[:3]


# -- the optional LLM -----------------------------------------------------------------------------
CONSULTANT_PROMPT = """You are the consultant of a coding-agent orchestrator (level 1 of its \
escalation ladder). A task failed {attempt_count} times. Find out why and decide what changes \
for the next attempts. You act alone: no human is asked.

Task {task_id}: {task_title}
{task_body}
Files of this task: {task_files}
Acceptance criteria: {criteria}
Completed earlier tasks (id: files): {earlier}
Current model: {current_model}. Model you may switch to: {fallback_model}.

Attempts, oldest first (each error cut to its tail):
{attempts}

A rules-based draft decision (improve it; keep what is right):
{draft}

Answer with one JSON object and nothing else:
{{"analysis": {{"failure_summary": "...", "root_cause": "..."}},
 "decision": {{"model_switch": {{"to": "...", "reasoning": "..."}} or null,
  "plan_revert": {{"enabled": true/false, "revert_to_task": "<task id>" or null, "reasoning": "..."}},
  "additional_hints": ["concrete instructions for the coding agent"],
  "spec_updates": {{"{acceptance_key}": ["..."]}},
  "additional_skills": ["..."]}},
 "expected_outcome": "...", "confidence": 0.0-1.0}}
model_switch.to may only be {fallback_model}; revert_to_task must be one of: {completed}."""


def _prompt(
    task: Task,
    attempts: Sequence[Mapping[str, Any]],
    completed_tasks: Sequence[str],
    current_model: str | None,
    fallback_model: str | None,
    earlier_tasks: Sequence[Task],
    draft: ConsultantDecision,
) -> str:
    shown = []
    for a in failed_attempts(attempts):
        text = _error_text(a)[-ERROR_TAIL_CHARS:]
        shown.append(
            f"--- attempt {a.get('number', '?')} (model {a.get('model') or 'default'}, "
            f"verdict {a.get('verdict')}) ---\n{text or '(no error text)'}"
        )
    earlier = "; ".join(
        f"{t.id}: {', '.join(t.files) or '-'}" for t in earlier_tasks if t.id in completed_tasks
    )
    return CONSULTANT_PROMPT.format(
        attempt_count=len(shown),
        task_id=task.id,
        task_title=task.title,
        task_body=task.body[:2000],
        task_files=", ".join(task.files) or "-",
        criteria="; ".join(task.acceptance_criteria) or "-",
        earlier=earlier or "none",
        current_model=current_model or "default",
        fallback_model=json.dumps(fallback_model) if fallback_model else "none (no switch)",
        attempts="\n".join(shown),
        draft=json.dumps(draft.model_dump(mode="json"), indent=2, ensure_ascii=False),
        acceptance_key=ACCEPTANCE_KEY,
        completed=", ".join(completed_tasks) or "none (no revert)",
    )


def _strings(value: Any, limit: int = 10, length: int = 400) -> list[str]:
    if not isinstance(value, list):
        return []
    return [_clean(v, length) for v in value if isinstance(v, str) and v.strip()][:limit]


def _merge(
    rules: ConsultantDecision,
    answer: dict[str, Any],
    task: Task,
    completed_tasks: Sequence[str],
    current_model: str | None,
    fallback_model: str | None,
    source: str,
) -> ConsultantDecision:
    """The LLM adds to the rules: its analysis and hints come first, the rules' facts stay.

    A model switch only ever goes to `fallback_model`; a revert only to a completed task (the
    LLM may also call off the rules' revert, which is a judgement it is better placed to make).
    """
    out = rules.model_copy(deep=True)
    out.source = source
    analysis = answer.get("analysis")
    if isinstance(analysis, dict):
        for key in ("failure_summary", "root_cause"):
            if isinstance(analysis.get(key), str) and analysis[key].strip():
                setattr(out.analysis, key, _clean(analysis[key], 600))
    body = answer.get("decision")
    if not isinstance(body, dict):
        body = {}
    switch = body.get("model_switch")
    if (
        isinstance(switch, dict)
        and fallback_model
        and switch.get("to") == fallback_model
        and fallback_model != current_model
    ):
        out.decision.model_switch = ModelSwitch.model_validate(
            {
                "from": current_model or "default",
                "to": fallback_model,
                "reasoning": _clean(str(switch.get("reasoning") or ""), 400)
                or (rules.decision.model_switch.reasoning if rules.decision.model_switch else ""),
            }
        )
    revert = body.get("plan_revert")
    if isinstance(revert, dict) and isinstance(revert.get("enabled"), bool):
        target = revert.get("revert_to_task")
        target = str(target) if target is not None else None
        reasoning = _clean(str(revert.get("reasoning") or ""), 400)
        if revert["enabled"] and target in completed_tasks and target != task.id:
            out.decision.plan_revert = PlanRevert(
                enabled=True, revert_to_task=target, current_task=task.id, reasoning=reasoning
            )
        elif not revert["enabled"]:
            out.decision.plan_revert = PlanRevert(current_task=task.id, reasoning=reasoning)
    hints = _strings(body.get("additional_hints"))
    known = {h.lower() for h in hints}
    out.decision.additional_hints = hints + [
        h for h in rules.decision.additional_hints if h.lower() not in known
    ]
    updates = body.get("spec_updates")
    if isinstance(updates, dict):
        for key, value in updates.items():
            extra = _strings(value if isinstance(value, list) else [value])
            have = out.decision.spec_updates.setdefault(str(key), [])
            have += [c for c in extra if c not in have]
        out.decision.spec_updates = {k: v for k, v in out.decision.spec_updates.items() if v}
    out.decision.additional_skills = list(
        dict.fromkeys(rules.decision.additional_skills + _strings(body.get("additional_skills")))
    )
    if isinstance(answer.get("expected_outcome"), str) and answer["expected_outcome"].strip():
        out.expected_outcome = _clean(answer["expected_outcome"], 600)
    confidence = answer.get("confidence")
    if (
        isinstance(confidence, int | float)
        and not isinstance(confidence, bool)
        and 0.0 <= float(confidence) <= 1.0
    ):
        out.confidence = round(float(confidence), 2)
    return out


def consult(
    task: Task,
    attempts: Sequence[Mapping[str, Any]],
    *,
    completed_tasks: Sequence[str],
    current_model: str | None,
    fallback_model: str | None,
    llm: LLMBackend | None = None,
    earlier_tasks: Sequence[Task] | None = None,
    timeout: float = 60,
) -> ConsultantDecision:
    """Level 1: what changes for the next attempts of a task that failed `max_task_attempts` times.

    `attempts` are the task's attempt rows (at least `number`, `error_summary`, `verdict`,
    `model`; optional `failed_gates`). `completed_tasks` are ids in completion order;
    `earlier_tasks` their Task objects, whose `files` let the errors implicate one of them.
    """
    earlier = list(earlier_tasks or [])
    decision = _rules(task, attempts, completed_tasks, current_model, fallback_model, earlier)
    if llm is None:
        return decision
    prompt = _prompt(
        task, attempts, completed_tasks, current_model, fallback_model, earlier, decision
    )
    try:
        answer = extract_json(llm.complete(prompt, timeout=timeout))
        return _merge(
            decision,
            answer,
            task,
            completed_tasks,
            current_model,
            fallback_model,
            f"llm:{llm.name}",
        )
    except Exception as exc:  # any LLM failure: the rules' decision stands
        logger.warning("consultant LLM %s failed, the rules decide: %s", llm.name, exc)
        decision.source = "rules (llm failed)"
        return decision
