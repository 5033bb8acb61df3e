"""Level 2 of the escalation ladder (seed 002): the `hil-request.json` a person reads — what was
tried, what the consultant concluded, the options (lettered as the terminal and the CLI show them)
with their effort, and the question.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from orchestrator.consultant.analysis import Reading, failed_attempts
from orchestrator.consultant.decision import ConsultantDecision, now
from orchestrator.models import Task
from orchestrator.rules.failure import normalise_error

__all__ = ["DEFAULT_OPTIONS", "build_hil_request", "hil_options"]

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
    reading = Reading(attempts)
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
        after = Reading(failed_attempts(attempts)[before:])
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
        "timestamp": now(),
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
