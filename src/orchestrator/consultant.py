"""Level 1 of the escalation ladder (seed 002): the consultant, and the ladder's files on disk.

After a task failed `max_task_attempts` times, the consultant decides alone what changes for the
next attempts: another model, a revert to an earlier task's checkpoint, hints drawn from the
errors, tighter acceptance criteria. The rules below decide offline; an optional LLM may refine
their answer, and when it fails or answers nonsense the rules' decision stands.

Every step writes seed 002's files under the task's escalation folder:
`level-1/{trigger.json, consultant-decision.json, updated-config.yaml}` and
`level-2/{trigger.json, hil-request.json, user-decision.json, resolution.json}`.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from orchestrator.loops import error_signature, normalise_error
from orchestrator.models import Task, UserError

__all__ = [
    "ACCEPTANCE_KEY",
    "Analysis",
    "ConsultantDecision",
    "DecisionBody",
    "ModelSwitch",
    "PlanRevert",
    "apply_decision",
    "build_hil_request",
    "checkpoint_before",
    "consult",
    "failing_gates",
    "failing_tests",
    "hil_options",
    "key_line",
    "level_dir",
    "read_user_decision",
    "write_level1",
    "write_level2",
    "write_resolution",
    "write_user_decision",
]

logger = logging.getLogger("orchestrator.consultant")

ACCEPTANCE_KEY = "implementation.acceptance_criteria"
"""The `spec_updates` key of seed 002 for tightened acceptance criteria."""

ERROR_TAIL_CHARS = 4_000
"""Each attempt's error text in the LLM prompt is cut to its tail."""


class LLMLike(Protocol):
    """What the consultant needs of `orchestrator.llm.LLMBackend` (structurally the same)."""

    @property
    def name(self) -> str: ...

    def complete(self, prompt: str, *, timeout: float = 60) -> str: ...


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- the decision, in seed 002's `consultant-decision.json` shape ---------------------------------
class ModelSwitch(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    from_: str = Field(alias="from")
    to: str
    reasoning: str

    @model_serializer(mode="wrap")
    def _with_from_key(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """`from` is a keyword in Python; the JSON key is `from` whatever `by_alias` says."""
        data: dict[str, Any] = handler(self)
        source = data.pop("from_", data.pop("from", self.from_))
        return {"from": source, "to": data["to"], "reasoning": data["reasoning"]}


class PlanRevert(BaseModel):
    enabled: bool = False
    revert_to_task: str | None = None
    """The earliest completed task whose work is implicated: it and every later task are redone,
    so the workdir goes back to the checkpoint *before* it (see `checkpoint_before`)."""
    current_task: str
    reasoning: str = ""


class DecisionBody(BaseModel):
    action: Literal["retry_with_changes"] = "retry_with_changes"
    model_switch: ModelSwitch | None = None
    plan_revert: PlanRevert
    additional_hints: list[str] = Field(default_factory=list)
    spec_updates: dict[str, list[str]] = Field(default_factory=dict)
    additional_skills: list[str] = Field(default_factory=list)


class Analysis(BaseModel):
    failure_summary: str
    root_cause: str
    attempts_analyzed: int


class ConsultantDecision(BaseModel):
    """Serialises (`model_dump(mode="json")`) to exactly seed 002's consultant-decision.json."""

    timestamp: str = Field(default_factory=_now)
    analysis: Analysis
    decision: DecisionBody
    expected_outcome: str
    confidence: float = Field(ge=0.0, le=1.0)
    source: str = Field(default="rules", exclude=True)
    """Who decided: `rules`, `llm:<backend>` or `rules (llm failed)`; not part of the file."""


# -- reading errors -------------------------------------------------------------------------------
_PYTEST_E = re.compile(r"^E\s{2,}(\S.*)$")
_EXCEPTION = re.compile(r"^\s*((?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Failure))\b(:.*)?$")
_SUMMARY = re.compile(r"^(?:FAILED|ERROR)\s+(\S+?)(?:::(\S+))?(?:\s+-\s+(.*))?$")
_ERROR_WORD = re.compile(
    r"^\s*(?:error(?:\[\w+\])?|fatal|panic|FAIL)\b[:\s]|\b(?:TS\d{4}|E\d{3,4})\b|\berror:",
    re.IGNORECASE,
)
_GATE = re.compile(r"^Gate `(.+?)` failed \((.+?)\)", re.MULTILINE)
_FAILED_NODE = re.compile(r"^(?:FAILED|ERROR)\s+(\S+?\.py)::(\S+)", re.MULTILINE)
_JS_FAIL = re.compile(r"^\s*FAIL\s+(\S+\.(?:[cm]?[jt]sx?))\b", re.MULTILINE)
_PATHISH = re.compile(r"[\w./\\-]+\.\w+")
_TEST_FILE = re.compile(
    r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*$|_test\.\w+$|\.(test|spec)\.\w+$|conftest\.py$"
)
_GENERIC_NAMES = {"__init__.py", "__main__.py", "index.js", "index.ts", "main.py", "setup.py"}
_TAIL_LINES = 400


def _clean(line: str, limit: int = 200) -> str:
    line = " ".join(line.strip().split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def key_line(text: str) -> str | None:
    """The line of an error text that says what went wrong (the failing assertion, the exception).

    >>> key_line("tests/test_a.py:3: in test_x\\nE       assert 1 == 2\\nFAILED tests/test_a.py::test_x")
    'assert 1 == 2'
    """
    lines = [ln for ln in text.splitlines()[-_TAIL_LINES:] if ln.strip()]
    if not lines:
        return None
    for ln in lines:  # pytest's first `E` line is the assertion or the exception itself
        m = _PYTEST_E.match(ln)
        if m and not m.group(1).startswith(("+", "-", "?", "At index", "Full diff", "Use -v")):
            return _clean(m.group(1))
    for ln in reversed(lines):
        m = _EXCEPTION.match(ln)
        if m:
            return _clean(ln)
    for ln in reversed(lines):
        m = _SUMMARY.match(ln.strip())
        if m and m.group(3):
            return _clean(m.group(3))
    for ln in reversed(lines):
        if _ERROR_WORD.search(ln) and not ln.startswith("Gate `"):
            return _clean(ln)
    last = lines[-1]
    return None if last.startswith("Gate `") else _clean(last)


def failing_gates(text: str) -> list[str]:
    """Gate commands reported as failed in an error summary (`Gate `cmd` failed (exit 1):`)."""
    return list(dict.fromkeys(m.group(1) for m in _GATE.finditer(text)))


def failing_tests(text: str) -> list[str]:
    """Test files named by the runner's failure lines (pytest `FAILED x::y`, jest/vitest `FAIL x`)."""
    found = [m.group(1) for m in _FAILED_NODE.finditer(text)]
    found += [m.group(1) for m in _JS_FAIL.finditer(text)]
    return list(dict.fromkeys(found))


def _error_text(attempt: Mapping[str, Any]) -> str:
    return str(attempt.get("error_summary") or "")


def _failed(attempts: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [a for a in attempts if a.get("verdict") != "completed"]


class _Reading:
    """What the attempts' errors say, shared by the decision and the human request."""

    def __init__(self, attempts: Sequence[Mapping[str, Any]]) -> None:
        self.attempts = _failed(attempts)
        self.texts = [_error_text(a) for a in self.attempts]
        self.keys = [key_line(t) for t in self.texts]
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
def _specific_hint(signature: str | None, top: str | None) -> str | None:
    text = f"{signature or ''} {top or ''}"
    rules: tuple[tuple[str, str], ...] = (
        (
            r"ModuleNotFoundError|ImportError|Cannot find module",
            "Fix the import first: check the module path and that the module exists in this "
            "project or is a declared dependency.",
        ),
        (
            r"SyntaxError|IndentationError",
            "The code does not parse: run the file through the interpreter or compiler before "
            "running the tests.",
        ),
        (
            r"NameError|is not defined",
            "A name is used but never defined or imported: check spelling and imports.",
        ),
        (
            r"AttributeError",
            "An object lacks the attribute the code expects: check the real API (read its "
            "source or docs) instead of guessing.",
        ),
        (
            r"TypeError",
            "Check the signatures: a function is called with arguments or types it does not take.",
        ),
        (
            r"FileNotFoundError|No such file",
            "A file the code or a test needs does not exist where it is looked for: check the "
            "path relative to the working directory.",
        ),
        (
            r"timed out|TimeoutError|Timeout",
            "The command timed out: look for an infinite loop, a blocking call or input being "
            "waited for.",
        ),
        (
            r"\b(?:E\d{3}|F\d{3}|W\d{3}|TS\d{4})\b",
            "Run the linter or type checker yourself and fix every report before finishing.",
        ),
    )
    for pattern, hint in rules:
        if re.search(pattern, text):
            return hint
    return None


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
    reading: _Reading,
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


def _criteria(task: Task, reading: _Reading) -> list[str]:
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
    r = _Reading(attempts)
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
    specific = _specific_hint(r.signature, r.top)
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


def _commands_to_run(reading: _Reading, task: Task) -> list[str]:
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
    for a in _failed(attempts):
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


def _extract_json(text: str) -> Any:
    """`orchestrator.llm.extract_json` when that module is there, else the outermost {...}."""
    try:
        return importlib.import_module("orchestrator.llm").extract_json(text)
    except ModuleNotFoundError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end < start:
            raise ValueError("no JSON object in the answer") from None
        return json.loads(text[start : end + 1])


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
    llm: LLMLike | None = None,
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
        answer = _extract_json(llm.complete(prompt, timeout=timeout))
        if not isinstance(answer, dict):
            raise ValueError("the answer is not a JSON object")
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


def checkpoint_before(task_id: str, completed_tasks: Sequence[str]) -> str:
    """The checkpoint label to revert to so that `task_id` and later tasks are redone:
    the completed task right before it, or "start".

    >>> checkpoint_before("1.2", ["1.1", "1.2", "1.3"])
    '1.1'
    """
    order = list(completed_tasks)
    i = order.index(task_id) if task_id in order else len(order)
    return order[i - 1] if i > 0 else "start"


def apply_decision(config: Mapping[str, Any], decision: ConsultantDecision) -> dict[str, Any]:
    """Seed 002's `apply_consultant_decision`: the task config for the next attempts."""
    out = dict(config)
    body = decision.decision
    if body.model_switch:
        out["model"] = body.model_switch.to
    if body.plan_revert.enabled:
        out["revert_to_task"] = body.plan_revert.revert_to_task
    if body.additional_hints:
        out["hints"] = list(dict.fromkeys([*out.get("hints", []), *body.additional_hints]))
    criteria = body.spec_updates.get(ACCEPTANCE_KEY, [])
    if criteria:
        have = list(out.get("acceptance_criteria", []))
        out["acceptance_criteria"] = have + [c for c in criteria if c not in have]
    if body.additional_skills:
        out["skills"] = list(dict.fromkeys([*out.get("skills", []), *body.additional_skills]))
    return out


# -- level 2: the request to a human --------------------------------------------------------------
DEFAULT_OPTIONS = (
    "Retry with guidance (type it as your answer)",
    "Skip this task",
    "Abort the run",
)


def _letter(i: int) -> str:
    return chr(ord("A") + i) if i < 26 else str(i + 1)


def _effort(description: str) -> str:
    low = description.lower()
    if "abort" in low:
        return "none"
    if "skip" in low:
        return "low (tasks that depend on it are skipped too)"
    if "retry" in low or "guidance" in low:
        return "low (you type the guidance)"
    if "revert" in low or "redo" in low:
        return "medium (the reverted tasks run again)"
    if any(w in low for w in ("write", "manual", "split", "provide")):
        return "high (you change the plan or the code)"
    return "medium"


def hil_options(consultant: ConsultantDecision | Mapping[str, Any] | None = None) -> list[str]:
    """The options a level-2 human gets: retry with guidance, skip, abort, plus the consultant's
    own (a revert it proposed). Use them as the escalation's options so letters agree."""
    options = list(DEFAULT_OPTIONS)
    data = _decision_dict(consultant)
    revert = (data.get("decision") or {}).get("plan_revert") or {}
    if revert.get("enabled") and revert.get("revert_to_task"):
        options.append(
            f"Revert to before task {revert['revert_to_task']} and redo from there "
            "(the consultant's proposal)"
        )
    return options


def _decision_dict(consultant: ConsultantDecision | Mapping[str, Any] | None) -> dict[str, Any]:
    if consultant is None:
        return {}
    if isinstance(consultant, ConsultantDecision):
        return consultant.model_dump(mode="json")
    return dict(consultant)


def _recommended_index(recommendation: str | None, options: Sequence[str]) -> int | None:
    if not recommendation:
        return None
    rec = recommendation.strip()
    m = re.match(r"^(?:option\s+)?([A-Z])(?:[).:\s]|$)", rec)
    if m and ord(m.group(1)) - ord("A") < len(options):
        return ord(m.group(1)) - ord("A")
    low = rec.lower()
    for i, opt in enumerate(options):
        if opt.lower() in low or low in opt.lower():
            return i
    return None


def _minutes(attempts: Sequence[Mapping[str, Any]]) -> float:
    seconds = 0.0
    for a in attempts:
        if a.get("duration_s") is not None:
            seconds += float(a["duration_s"])
        elif a.get("started_at") is not None and a.get("ended_at") is not None:
            seconds += float(a["ended_at"]) - float(a["started_at"])
    return round(seconds / 60.0, 1)


def _logs_path(attempts: Sequence[Mapping[str, Any]], task_folder: Path | None) -> str:
    dirs = [Path(str(a["artifact_dir"])) for a in attempts if a.get("artifact_dir")]
    if not dirs:
        return "./"
    parent = Path(os.path.commonpath([str(d.parent) for d in dirs]))
    if task_folder is not None:
        try:
            rel = parent.relative_to(task_folder).as_posix()
            return "./" if rel == "." else f"{rel}/"
        except ValueError:
            pass
    return f"{parent.as_posix()}/"


def build_hil_request(
    *,
    run_id: str,
    task: Task,
    attempts: Sequence[Mapping[str, Any]],
    escalation: Mapping[str, Any] | None = None,
    consultant: ConsultantDecision | Mapping[str, Any] | None = None,
    level_1_interventions: int | None = None,
    task_folder: Path | None = None,
    extra_options: Sequence[str] = (),
) -> dict[str, Any]:
    """Seed 002's hil-request.json for a task that reached a human.

    The options are the escalation's own (so the letters agree with the terminal and the CLI),
    else `hil_options(consultant)`; `extra_options` are appended. `full_logs` is relative to
    `task_folder` when given (`write_level2` makes an absolute one relative to its task folder).
    """
    esc = dict(escalation or {})
    reading = _Reading(attempts)
    decision = _decision_dict(consultant)
    analysis = decision.get("analysis") or {}
    descriptions = [str(o) for o in (esc.get("options") or [])] or hil_options(consultant)
    descriptions += [o for o in extra_options if o not in descriptions]
    rec = _recommended_index(esc.get("recommendation"), descriptions)
    if rec is None and not esc.get("options") and not esc.get("recommendation"):
        rec = 0  # a human's guidance is the one thing the attempts so far did not have
    options: list[dict[str, Any]] = []
    for i, text in enumerate(descriptions):
        option: dict[str, Any] = {"id": _letter(i), "description": text, "effort": _effort(text)}
        if i == rec:
            option["consultant_recommendation"] = True
        options.append(option)

    n = len(attempts)
    before = int(analysis.get("attempts_analyzed") or 0)
    if decision:
        after = _Reading(_failed(attempts)[before:])
        problem = (
            f"Task {task.id} ({task.title}) still fails after {n} attempts, "
            f"{len(after.attempts)} of them after the consultant's changes"
            + (f"; last error `{after.top}`" if after.top else "")
        )
        changes = _changes(decision)
        earlier = {normalise_error(k) for k in reading.keys[:before] if k}
        if after.top and normalise_error(after.top) in earlier:
            learning = f"The consultant's changes ({changes}) did not change the failure."
        elif after.top:
            learning = (
                f"After the consultant's changes ({changes}) the failure changed to `{after.top}`."
            )
        else:
            learning = f"The consultant's changes ({changes}) were tried."
        cause = str(analysis.get("root_cause") or "")
    else:
        question = str(esc.get("question") or "").strip()
        problem = question.splitlines()[0] if question else f"Task {task.id} ({task.title}) failed"
        if reading.top and not question:
            problem += f": `{reading.top}`"
        cause = str(esc.get("why") or "") or (
            f"The last error is `{reading.top}`." if reading.top else "Unknown."
        )
        learning = (
            f"{len(reading.attempts)} failed attempts with {reading.distinct} different errors."
            if reading.attempts
            else "No attempt has failed yet: the agent asked before acting."
        )

    cost = [float(a["cost_usd"]) for a in attempts if a.get("cost_usd") is not None]
    models = list(
        dict.fromkeys(
            str(a.get("model") or f"{a['agent']} (default model)")
            for a in attempts
            if a.get("model") or a.get("agent")
        )
    )
    interventions = (
        level_1_interventions if level_1_interventions is not None else int(bool(decision))
    )
    attachments = {"full_logs": _logs_path(attempts, task_folder)}
    if decision:
        attachments["consultant_decision"] = "escalation/level-1/consultant-decision.json"
    request: dict[str, Any] = {
        "timestamp": _now(),
        "project_id": run_id,
        "phase": f"{task.id} {task.title}",
        "summary": {
            "total_attempts": n,
            "level_1_interventions": interventions,
            "models_tried": models,
            "time_spent_minutes": _minutes(attempts),
            "cost_usd": round(sum(cost), 4) if cost else None,
        },
        "consultant_analysis": {"problem": problem, "suspected_cause": cause, "learning": learning},
        "options": options,
        "question_for_user": str(esc.get("question") or "")
        or (
            f"Task {task.id} ({task.title}) still fails after {n} attempts"
            + (" and a consultant intervention" if decision else "")
            + ". How should we proceed?"
        ),
        "attachments": attachments,
    }
    if esc.get("why"):
        request["why"] = str(esc["why"])
    return request


def _changes(decision: Mapping[str, Any]) -> str:
    body = decision.get("decision") or {}
    parts = []
    if body.get("model_switch"):
        parts.append(f"model {body['model_switch'].get('to')}")
    revert = body.get("plan_revert") or {}
    if revert.get("enabled"):
        parts.append(f"revert to task {revert.get('revert_to_task')}")
    if body.get("additional_hints"):
        parts.append(f"{len(body['additional_hints'])} hints")
    if body.get("spec_updates"):
        parts.append("tighter acceptance criteria")
    return ", ".join(parts) or "none"


# -- files ----------------------------------------------------------------------------------------
_LEVEL = re.compile(r"^level-\d+$")


def level_dir(folder: Path, level: int) -> Path:
    """`<task>/escalation/level-N` from the task folder, its `escalation` folder, or the level
    folder itself (a folder already named `level-M` is used as it is)."""
    folder = Path(folder)
    if _LEVEL.match(folder.name):
        return folder
    if folder.name == "escalation":
        return folder / f"level-{level}"
    return folder / "escalation" / f"level-{level}"


def _write_atomic(path: Path, text: str) -> None:
    """Readers (another process answering or watching) never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    _write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _stamped(data: Mapping[str, Any]) -> dict[str, Any]:
    """The data with a `timestamp` first (the caller's own, else now)."""
    rest = {k: v for k, v in data.items() if k != "timestamp"}
    return {"timestamp": data.get("timestamp") or _now(), **rest}


def write_level1(
    folder: Path,
    trigger: Mapping[str, Any],
    decision: ConsultantDecision,
    updated_config: Mapping[str, Any],
) -> Path:
    """Write `level-1/{trigger.json, consultant-decision.json, updated-config.yaml}`; returns
    the level folder. `folder`: the task folder or its `escalation` folder."""
    out = level_dir(folder, 1)
    _write_json(out / "trigger.json", _stamped(trigger))
    _write_json(out / "consultant-decision.json", decision.model_dump(mode="json"))
    _write_atomic(
        out / "updated-config.yaml",
        yaml.safe_dump(dict(updated_config), sort_keys=False, allow_unicode=True),
    )
    return out


def write_level2(folder: Path, trigger: Mapping[str, Any], hil_request: Mapping[str, Any]) -> Path:
    """Write `level-2/{trigger.json, hil-request.json}`; returns the level folder."""
    out = level_dir(folder, 2)
    request = dict(hil_request)
    attachments = dict(request.get("attachments") or {})
    logs = attachments.get("full_logs")
    task_folder = out.parent.parent
    if isinstance(logs, str) and Path(logs).is_absolute():
        try:
            rel = Path(logs).relative_to(task_folder).as_posix()
            attachments["full_logs"] = "./" if rel == "." else f"{rel}/"
            request["attachments"] = attachments
        except ValueError:
            pass
    _write_json(out / "trigger.json", _stamped(trigger))
    _write_json(out / "hil-request.json", request)
    return out


_ADDITIONAL_INPUT = {"spec_override": None, "manual_code": None, "priority_change": None}


def write_user_decision(folder: Path, decision: Mapping[str, Any]) -> dict[str, Any]:
    """Write `level-2/user-decision.json` (seed 002's shape; extra keys are kept).

    An escalation is answered once: when the file already holds a different answer, UserError
    shows the first one. The same answer again (a retry after a crash) completes the file.
    """
    path = level_dir(folder, 2) / "user-decision.json"
    data: dict[str, Any] = {
        "timestamp": _now(),
        "chosen_option": None,
        "user_comment": "",
        **{k: v for k, v in decision.items() if k != "additional_input"},
    }
    data["additional_input"] = {**_ADDITIONAL_INPUT, **dict(decision.get("additional_input") or {})}
    first = _read_json(path) if path.exists() else None
    if first is not None:
        same = all(first.get(k) == data.get(k) for k in ("chosen_option", "user_comment"))
        if not same:
            shown = first.get("chosen_option") or first.get("user_comment") or "?"
            raise UserError(
                f"already answered at {first.get('timestamp', '?')} with {shown!r}; "
                "an escalation takes one answer",
                path=str(path),
            )
        data["timestamp"] = first.get("timestamp", data["timestamp"])
    _write_json(path, data)
    return data


def read_user_decision(folder: Path) -> dict[str, Any] | None:
    """The answer in `level-2/user-decision.json` (written by a person or `write_user_decision`),
    or None when there is none yet; a broken file is a one-line UserError."""
    path = level_dir(folder, 2) / "user-decision.json"
    if not path.exists():
        return None
    data = _read_json(path)
    if not (data.get("chosen_option") or str(data.get("user_comment") or "").strip()):
        raise UserError(
            'needs "chosen_option" (a letter) or "user_comment" (your guidance)', path=str(path)
        )
    return data


def write_resolution(folder: Path, resolution: Mapping[str, Any]) -> Path:
    """Write `level-2/resolution.json`: what was finally done about the escalation."""
    path = level_dir(folder, 2) / "resolution.json"
    _write_json(path, _stamped(resolution))
    return path


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UserError(f"invalid JSON: {exc.msg}", path=str(path), line=exc.lineno) from None
    if not isinstance(data, dict):
        raise UserError("expected a JSON object", path=str(path))
    return data
