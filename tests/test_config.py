"""Settings: every source in order of precedence, each value knowing where it came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config import describe, load_settings
from orchestrator.models import ConfigError


def test_precedence_defaults_pyproject_toml_env_flags(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.orchestrator]\nmax_attempts = 4\nbrain = 'auto'\n"
    )
    (tmp_path / "orchestrator.toml").write_text(
        "max_attempts = 5\n[gates]\ncommands = ['pytest -q']\n"
    )
    settings, sources = load_settings(
        tmp_path, overrides={"agent": "replay"}, env={"ORCHESTRATOR_GATES__TIMEOUT": "12"}
    )
    assert (settings.max_attempts, settings.brain, settings.agent) == (5, "auto", "replay")
    assert settings.gates.commands == ["pytest -q"] and settings.gates.timeout == 12
    rows = {k: src for k, _, src in describe(settings, sources)}
    assert rows["max_attempts"].endswith("orchestrator.toml")
    assert rows["brain"].endswith("pyproject.toml")
    assert rows["gates.timeout"] == "environment" and rows["agent"] == "command line"
    assert rows["consultant"] == "default"


def test_env_merges_into_an_agent_section(tmp_path: Path) -> None:
    (tmp_path / "orchestrator.toml").write_text(
        "[codex]\nmodel = 'a'\nbase_url = 'http://127.0.0.1:1/v1'\n"
    )
    settings, _ = load_settings(tmp_path, env={"ORCHESTRATOR_CODEX__MODEL": "b"})
    assert settings.codex == {"model": "b", "base_url": "http://127.0.0.1:1/v1"}
    assert settings.agent_options("1.1", "codex")["model"] == "b"


def test_per_task_options_override_and_errors_name_their_file(tmp_path: Path) -> None:
    (tmp_path / "orchestrator.toml").write_text(
        "[claude]\nmodel = 'big'\n[tasks.\"1.2\"]\nmodel = 'small'\n"
    )
    settings, _ = load_settings(tmp_path, env={})
    assert settings.agent_options("1.1")["model"] == "big"
    assert settings.agent_options("1.2")["model"] == "small"
    (tmp_path / "orchestrator.toml").write_text('[tasks."1.1"]\nmax_turns = 0\n')
    with pytest.raises(ConfigError, match=r"tasks\.1\.1\.max_turns.*orchestrator\.toml"):
        load_settings(tmp_path, env={})


def test_unknown_setting_is_refused(tmp_path: Path) -> None:
    (tmp_path / "orchestrator.toml").write_text("max_atempts = 5\n")
    with pytest.raises(ConfigError, match="max_atempts"):
        load_settings(tmp_path, env={})


def test_environment_typos_are_refused_but_test_variables_ignored(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="max_atempts"):
        load_settings(tmp_path, env={"ORCHESTRATOR_MAX_ATEMPTS": "5"})
    settings, _ = load_settings(tmp_path, env={"ORCHESTRATOR_TEST_PG_URL": "postgresql://x"})
    assert settings.max_attempts == 3
