"""Which agent commands wait for a human (extreme destructive) and which run untouched."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orchestrator.models import ConfigError
from orchestrator.policy import CommandPolicy, classify_command, is_approval

ROUTINE = [
    "rm -rf node_modules",
    "rm -rf build/",
    "rm -rf ./dist .pytest_cache",
    "cd src && rm -rf __pycache__",
    "pytest -q",
    "ls -la",
    "rm notes.txt",
    "find . -name '*.pyc' -delete",
    "grep -rn 'DROP TABLE' migrations/",
    "git push origin feature/cache",
    "git push -f origin feature/cache",
    "git push origin main",
    "psql -c 'SELECT * FROM users'",
    "DELETE_ME=1 make clean",
]
EXTREME = {
    "rm -rf /": "rm-recursive",
    "rm -rf ~": "rm-recursive",
    "rm -rf $HOME/": "rm-recursive",
    "rm -rf ../data": "rm-recursive",
    "rm -r -f /var/lib/postgresql": "rm-recursive",
    "sudo rm -rf /opt/app": "rm-recursive",
    "rm -rf .": "rm-recursive",
    "rm -rf *": "rm-recursive",
    "cd .. && rm -rf work": "rm-recursive",
    "rm -rf $BUILD_DIR/": "rm-recursive",
    "bash -c 'rm -rf /etc'": "rm-recursive",
    "find / -name '*.log' -delete": "find-delete-outside-workdir",
    "psql -c 'DROP TABLE users'": "sql-drop",
    "echo 'TRUNCATE TABLE orders;' | psql": "sql-truncate",
    "sqlite3 app.db 'DELETE FROM users;'": "sql-delete-all",
    "npx prisma migrate reset --force": "db-reset",
    "npx prisma db push --accept-data-loss": "db-reset",
    "bin/rails db:drop": "db-reset",
    "python manage.py flush --no-input": "db-reset",
    "redis-cli FLUSHALL": "db-reset",
    "terraform destroy -auto-approve": "infra-destroy",
    "git push --force origin main": "git-force-push-shared",
    "git push origin +master": "git-force-push-shared",
    "git push --force-with-lease origin HEAD:production": "git-force-push-shared",
    "git push origin --delete main": "git-force-push-shared",
    "git push origin :develop": "git-force-push-shared",
}


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    wd = tmp_path / "work"
    wd.mkdir()
    return wd


@pytest.mark.parametrize("command", ROUTINE)
def test_routine_commands_are_not_held(command: str, workdir: Path) -> None:
    assert CommandPolicy().check("Bash", {"command": command}, workdir) is None


@pytest.mark.parametrize(("command", "rule"), EXTREME.items())
def test_extreme_commands_are_held_with_the_exact_command(
    command: str, rule: str, workdir: Path
) -> None:
    hit = CommandPolicy().check("Bash", {"command": command}, workdir)
    assert hit is not None and hit.rule == rule and hit.command == command
    q = hit.question()
    assert q.category == "extreme_destructive"
    assert q.question == f"The agent wants to run: {command}"
    assert q.options == ["Allow", "Deny"] and q.detail["command"] == command


def test_bare_force_push_is_held_only_on_a_shared_branch(workdir: Path) -> None:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=workdir, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    assert classify_command("git push --force", workdir) == (
        "git-force-push-shared",
        "force-pushes the shared branch main",
    )
    git("checkout", "-q", "-b", "feature/x")
    assert classify_command("git push --force", workdir) is None


def test_configured_patterns_allow_wins_over_deny_and_builtins(workdir: Path) -> None:
    policy = CommandPolicy(deny=[r"\bkubectl\s+apply\b"], allow=[r"^rm -rf /tmp/scratch\b"])
    assert policy.check("Bash", {"command": "kubectl apply -f prod.yaml"}, workdir) is not None
    assert policy.check("Bash", {"command": "rm -rf /tmp/scratch/cache"}, workdir) is None
    assert policy.check("Bash", {"command": "rm -rf /tmp/other"}, workdir) is not None
    assert CommandPolicy(builtin=False).check("Bash", {"command": "rm -rf /"}, workdir) is None


def test_built_from_the_settings_model_or_a_mapping(workdir: Path) -> None:
    from pydantic import BaseModel

    class PolicyConfig(BaseModel):
        hold: list[str] = []
        allow: list[str] = []
        enabled: bool = True

    held = CommandPolicy.from_config(PolicyConfig(hold=[r"^make deploy"]))
    assert held.check("Bash", {"command": "make deploy"}, workdir) is not None
    off = CommandPolicy.from_config(PolicyConfig(enabled=False))
    assert off.check("Bash", {"command": "rm -rf /"}, workdir) is None
    assert off.describe()["enabled"] is False
    assert (
        CommandPolicy.from_config(None).check("Bash", {"command": "rm -rf /"}, workdir) is not None
    )


def test_only_tools_with_a_command_are_checked(workdir: Path) -> None:
    policy = CommandPolicy()
    assert policy.check("Write", {"file_path": "/etc/passwd", "content": ""}, workdir) is None
    assert policy.check("mcp__shell__run", {"command": "rm -rf /"}, workdir) is not None


def test_config_errors_are_one_line_and_describe_shows_everything() -> None:
    with pytest.raises(ConfigError, match="not a valid regex"):
        CommandPolicy(deny=["(unclosed"])
    with pytest.raises(ConfigError, match="unknown key"):
        CommandPolicy.from_mapping({"denny": []})
    described = CommandPolicy.from_mapping(
        {"deny": ["x"], "protected_branches": ["main"]}
    ).describe()
    assert described["deny"] == ["x"] and described["protected_branches"] == ["main"]
    assert any(r.startswith("sql-drop") for r in described["builtin_rules"])


@pytest.mark.parametrize(
    ("answer", "allowed"),
    [
        ("Allow", True),
        ("yes", True),
        ("Deny", False),
        (None, False),
        ("no, that's production", False),
    ],
)
def test_answers_that_mean_allow(answer: str | None, allowed: bool) -> None:
    assert is_approval(answer) is allowed
