"""Labelled agent outputs: `<root>/<verdict>/<name>.txt`, a YAML header between `---` lines, then
the output verbatim. Shared by the tuning corpus and the held-out set."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True)
class Case:
    path: Path
    verdict: str
    meta: dict[str, Any]
    text: str

    @property
    def category(self) -> str | None:
        value = self.meta.get("category")
        return str(value) if value else None


def load_cases(root: Path) -> list[Case]:
    cases = []
    for path in sorted(root.glob("*/*.txt")):
        raw = path.read_text(encoding="utf-8")
        if not raw.startswith("---\n"):
            raise AssertionError(f"{path}: missing YAML header")
        _, header, text = raw.split("---\n", 2)
        meta = yaml.safe_load(header) or {}
        cases.append(Case(path, path.parent.name, meta, text))
    return cases
