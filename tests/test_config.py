"""Settings: every source in order of precedence, each value knowing where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.helpers import cli

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


def test_the_run_mark_an_agent_inherits_is_not_a_setting(tmp_path: Path) -> None:
    """Every process a run starts carries ORCHESTRATOR_RUN_MARK: an agent's own `orchestrator …`
    (and a fleet worker, which marks its own environment) must still load its settings."""
    from orchestrator.agents.process import MARK_VAR

    settings, _ = load_settings(tmp_path, env={MARK_VAR: "run-20261123-abcd"})
    assert settings.max_attempts == 3


# -- agents by name: each takes only its own options ----------------------------------------------
@pytest.mark.parametrize(
    ("agent", "option"),
    [
        ("claude", "sandbox"),
        ("codex", "fallback_model"),
        ("gemini", "max_turns"),
        ("aider", "bogus"),
    ],
)
def test_an_option_the_agent_does_not_take_is_a_one_line_error(
    tmp_path: Path, agent: str, option: str
) -> None:
    (tmp_path / "orchestrator.toml").write_text(f"[{agent}]\n{option} = 'x'\n")
    proc = cli(tmp_path, "config", "show")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert f"'{agent}.{option}'" in lines[0] and "orchestrator.toml" in lines[0]
    assert f"{agent} has no option '{option}'" in lines[0] and "remove it" in lines[0]


def test_task_overrides_are_options_of_the_chosen_agent(tmp_path: Path) -> None:
    (tmp_path / "orchestrator.toml").write_text(
        "[claude]\nmodel = 'big'\n[codex]\nmodel = 'gpt'\n[tasks.\"1.2\"]\nfallback_model = 'small'\n"
    )
    settings, _ = load_settings(tmp_path, env={})
    assert settings.agent_options("1.2") == {"model": "big", "fallback_model": "small"}
    # codex has no fallback model: the override is refused, never silently dropped or passed on
    with pytest.raises(ConfigError, match=r"tasks\.1\.2\.fallback_model.*codex has no option"):
        settings.agent_options("1.2", "codex")
    with pytest.raises(
        ConfigError, match=r"'tasks\.1\.2\.fallback_model' from .*orchestrator\.toml: codex has"
    ):
        load_settings(tmp_path, overrides={"agent": "codex"}, env={})
    (tmp_path / "orchestrator.toml").write_text(
        "[codex]\nmodel = 'gpt'\n[tasks.\"1.2\"]\nmodel = 'o'\n"
    )
    settings, _ = load_settings(tmp_path, overrides={"agent": "codex"}, env={})
    assert settings.agent_options("1.1") == {"model": "gpt"}
    assert settings.agent_options("1.2") == {"model": "o"}


def test_other_agents_never_receive_claudes_options(tmp_path: Path) -> None:
    (tmp_path / "orchestrator.toml").write_text("[claude]\nmodel = 'big'\nmax_turns = 9\n")
    settings, _ = load_settings(tmp_path, overrides={"agent": "replay"}, env={})
    assert settings.agent_options("1.1") == {}
    assert settings.agent_options("1.1", "claude") == {"model": "big", "max_turns": 9}


def test_agent_flags_go_to_the_chosen_agents_section(tmp_path: Path) -> None:
    (tmp_path / "orchestrator.toml").write_text("agent = 'codex'\n")
    settings, sources = load_settings(
        tmp_path,
        overrides={"agent_options.model": "gpt-x", "agent_options.max_turns": None},
        env={},
    )
    assert settings.agent_section("codex") == {"model": "gpt-x"}
    assert sources["codex.model"] == "command line" and settings.agent_section("claude") == {}
    with pytest.raises(ConfigError, match=r"'codex\.fallback_model' from command line"):
        load_settings(tmp_path, overrides={"agent_options.fallback_model": "m"}, env={})
    settings, _ = load_settings(
        tmp_path, overrides={"agent": "claude", "agent_options.max_turns": 4}, env={}
    )
    assert settings.agent_options("1.1") == {"max_turns": 4}


def test_unknown_agents_and_sections_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"'agent' from command line: .*unknown agent 'codx'"):
        load_settings(tmp_path, overrides={"agent": "codx"}, env={})
    (tmp_path / "orchestrator.toml").write_text("[codx]\nmodel = 'a'\n")
    with pytest.raises(ConfigError, match=r"'codx' from .*orchestrator\.toml: unknown setting"):
        load_settings(tmp_path, env={})


def test_every_registered_agent_declares_strict_options() -> None:
    from orchestrator.agents import registry
    from orchestrator.agents.base import AgentOptions

    for name in registry.NAMES:
        cls = registry.adapter(name)
        assert issubclass(cls.options_model, AgentOptions), name
        assert cls.options_model.model_config.get("extra") == "forbid", name
        assert callable(cls.from_settings), name


def test_config_show_lists_the_chosen_agents_options_with_defaults(tmp_path: Path) -> None:
    (tmp_path / "orchestrator.toml").write_text(
        "agent = 'gemini'\n[gemini]\nmodel = 'g'\nenv = { GEMINI_API_KEY = 'secret-1' }\n"
    )
    proc = cli(tmp_path, "config", "show", "--json")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["settings"]
    assert rows["gemini.model"]["value"] == "g" and rows["gemini.model"]["source"].endswith(".toml")
    assert rows["gemini.trust_workspace"] == {"value": True, "source": "default"}
    assert rows["gemini.env.GEMINI_API_KEY"]["value"] == "<redacted>"
    assert "secret-1" not in proc.stdout
