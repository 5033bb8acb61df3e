"""Every test gets its own orchestrator home: nothing, in-process or not, touches the real one."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("orchestrator-home")
    monkeypatch.setenv("ORCHESTRATOR_HOME", str(home))
    return home
