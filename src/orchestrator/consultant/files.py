"""Seed 002's escalation files under a task's `escalation` folder, written atomically so another
process (answering, watching) never reads half a file:
`level-1/{trigger.json, consultant-decision.json, updated-config.yaml}` and
`level-2/{trigger.json, hil-request.json, user-decision.json, resolution.json}`.

`read_decision_file` is the one reader of a `user-decision.json`, whoever wrote it (a person,
`orchestrator answer`, another tool): a broken file is a one-line `UserError` naming it.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from orchestrator.consultant.decision import ConsultantDecision, now
from orchestrator.models import UserError

__all__ = [
    "ACTIONS",
    "level_dir",
    "read_decision_file",
    "read_user_decision",
    "write_level1",
    "write_level2",
    "write_resolution",
    "write_user_decision",
]

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
    return {"timestamp": data.get("timestamp") or now(), **rest}


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
        "timestamp": now(),
        "chosen_option": None,
        "user_comment": "",
        **{k: v for k, v in decision.items() if k != "additional_input"},
    }
    data["additional_input"] = {**_ADDITIONAL_INPUT, **dict(decision.get("additional_input") or {})}
    first = _read_json(path) if path.is_file() else None
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


ACTIONS = ("retry", "skip", "abort")
"""An `action` a decision file may name instead of an option or guidance."""


def read_decision_file(path: Path) -> dict[str, Any] | None:
    """The decision in a `user-decision.json` file, or None when there is none yet.

    Valid when it is a JSON object with a `chosen_option`, a non-blank `user_comment` or an
    `action` in `ACTIONS` (any case); anything else — bad JSON, not UTF-8, not an object, none of
    those keys — is a one-line UserError naming the file.
    """
    if not path.is_file():
        return None
    data = _read_json(path)
    action = str(data.get("action") or "").strip().lower()
    comment = str(data.get("user_comment") or "").strip()
    if not (data.get("chosen_option") or comment or action in ACTIONS):
        raise UserError(
            'needs "chosen_option" (a letter), "user_comment" (your guidance) or "action" '
            "(retry, skip or abort)",
            path=str(path),
        )
    return data


def read_user_decision(folder: Path) -> dict[str, Any] | None:
    """`read_decision_file` of `level-2/user-decision.json` under `folder` (see `level_dir`)."""
    return read_decision_file(level_dir(folder, 2) / "user-decision.json")


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
    except UnicodeDecodeError:
        raise UserError("not UTF-8 text; write the file as UTF-8 JSON", path=str(path)) from None
    except RecursionError:
        raise UserError("invalid JSON: nested too deeply", path=str(path)) from None
    except OSError as exc:
        raise UserError(f"cannot read the file: {exc.strerror or exc}", path=str(path)) from None
    if not isinstance(data, dict):
        raise UserError("expected a JSON object", path=str(path))
    return data
