"""What the page and its JSON API show, shaped from the store through `orchestrator.api`: one
function per view, so the HTML and the JSON never disagree."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from orchestrator import api
from orchestrator.artifacts import run_folder
from orchestrator.humans import RETRY_WHY, choices, panel_actions
from orchestrator.interpret.model import WHY_GENERIC, why_sentence
from orchestrator.models import UserError
from orchestrator.rows import ASKER_NAMES, AttemptRow, EscalationRow
from orchestrator.store import Store

MAX_FILES = 40
"""Files listed per attempt (prompt, output, transcript, decision, gate logs)."""
TERMINAL = frozenset({"COMPLETED", "FAILED"})


class NotFound(UserError):
    """A run, an escalation or a file the store does not have: 404."""


def escalation(esc: EscalationRow) -> dict[str, Any]:
    """An escalation as the inbox shows it: the panel's own keys (`humans.choices`), so a button
    posts exactly what a person would type at the terminal."""
    actions = panel_actions(esc["options"], esc.get("detail"))
    fallback = RETRY_WHY if esc["asker"] == "orchestrator" else WHY_GENERIC
    return {
        **esc,
        "asker_name": ASKER_NAMES.get(esc["asker"], "The agent"),
        "why_sentence": why_sentence(esc["why"], esc["category"], fallback),
        "choices": [
            {"key": c.key, "text": c.text, "action": c.action}
            for c in choices(esc["options"], actions)
        ],
        "action_panel": actions is not None,
    }


def inbox(store: Store) -> list[dict[str, Any]]:
    """Open escalations of every run, newest first."""
    rows = api.list_escalations(store=store)
    return [escalation(e) for e in sorted(rows, key=lambda e: -e["created_at"])]


def runs(store: Store) -> list[dict[str, Any]]:
    return api.list_runs(store=store)


def run_detail(store: Store, run_id: str) -> dict[str, Any]:
    """A run's page: its tasks (status, attempts, time, cost, last error), every attempt with its
    files, its escalations (answered ones with channel and wait), and background resumes."""
    row = store.run(run_id)
    if row is None:
        raise NotFound(f"no run {run_id!r}; the runs page lists them")
    data = api.status(run_id, store=store)
    folder = run_folder(json.loads(row["settings_json"]), run_id)
    attempts: list[AttemptRow] = data["attempts"]
    by_task: dict[str, list[dict[str, Any]]] = {}
    now = time.time()
    for a in attempts:
        running = a["ended_at"] is None and a["verdict"] is None
        by_task.setdefault(a["task_id"], []).append(
            {
                **a,
                "running": running,
                "elapsed_s": (now - a["started_at"]) if running else a["duration_s"],
                "files": attempt_files(folder, a["task_id"], a["number"]),
            }
        )
    tasks = []
    for t in data["tasks"]:
        mine = by_task.get(t["task_id"], [])
        costs = [a["cost_usd"] for a in mine if a["cost_usd"] is not None]
        tasks.append(
            {
                "task_id": t["task_id"],
                "title": t["title"],
                "status": t["status"],
                "level": t["level"],
                "attempts": len(mine),
                "duration_s": sum(a["elapsed_s"] or 0.0 for a in mine) if mine else None,
                "cost_usd": sum(costs) if costs else None,
                "last_error": mine[-1]["error_summary"] if mine else None,
                "attempt_rows": mine,
            }
        )
    resumes = [
        {"ts": e["ts"], "log": _relative(folder, e["payload"].get("log"))}
        for e in store.events(run_id, "resume_started")
    ]
    from orchestrator.detached import held

    return {
        "run": data["run"],
        "held": held(store, run_id),
        "tasks": tasks,
        "escalations": [
            escalation(e) for e in api.list_escalations(run_id, open_only=False, store=store)
        ],
        "resumes": resumes,
        "now": now,
    }


def _relative(folder: Path, path: Any) -> str | None:
    if not isinstance(path, str):
        return None
    try:
        return Path(path).resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return None


def attempt_files(folder: Path, task_id: str, number: int) -> list[str]:
    """The attempt's files, relative to the run folder (prompt.md, output.txt, gates/…)."""
    base = folder / task_id / f"attempt-{number}"
    if not base.is_dir():
        return []
    found = sorted(p for p in base.rglob("*") if p.is_file() and not p.is_symlink())
    return [p.relative_to(folder).as_posix() for p in found[:MAX_FILES]]


def run_file(store: Store, run_id: str, relative: str) -> tuple[Path, str]:
    """A file of the run's folder, read-only: never a path outside it (`..`, an absolute path,
    a symlink pointing out). Returns the path and its text (redacted, capped at 1 MB)."""
    row = store.run(run_id)
    if row is None:
        raise NotFound(f"no run {run_id!r}; the runs page lists them")
    folder = run_folder(json.loads(row["settings_json"]), run_id).resolve()
    target = (folder / relative).resolve()
    if not target.is_relative_to(folder) or target == folder or not target.is_file():
        raise NotFound(f"no file {relative!r} in run {run_id}'s folder")
    from orchestrator.redaction import redact_text

    limit = 1_000_000
    with target.open("rb") as fh:
        raw = fh.read(limit + 1)
    text = raw[:limit].decode("utf-8", errors="replace")
    if len(raw) > limit:
        text += f"\n… (cut at {limit:,} bytes; the whole file is {target})"
    return target, redact_text(text)
