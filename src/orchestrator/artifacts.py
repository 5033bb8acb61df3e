"""Where a run's files live on disk, and how they are written (complete or not at all)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def run_folder(settings_json: dict[str, Any], run_id: str) -> Path:
    return Path(settings_json["state_dir"]) / "runs" / run_id


def write_json(path: Path, data: Any) -> None:
    """Written to a temporary file and renamed, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
