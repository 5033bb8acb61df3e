"""The one decider of extreme destructive shell commands, shared by the policy and the interpreter."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orchestrator.interpret import classify_command as text_verdict
from orchestrator.policy import CommandPolicy
from orchestrator.rules.destructive import destructive_statement, extreme_destructive


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    wd = tmp_path / "work"
    wd.mkdir()
    return wd


BOTH = [
    "docker compose down -v",
    "helm uninstall prod",
    "kubectl delete pvc data-0",
    "supabase db reset",
    "sudo -u postgres dropdb shop",
    "timeout 10 rm -rf /",
    "eval 'rm -rf ~'",
    "rm -rf x#y /",
    "cat image.iso > /dev/sda",
    ":(){ :|:& };:",
    "$PSQL -c 'truncate orders'",
    "echo 'truncate orders' | psql",
    "TRUNCATE orders, items CASCADE;",
    "git push -f origin staging",
    "git push origin :release/1.0",
    "rm -rf .git",
    "rm -rf data",
]


@pytest.mark.parametrize("command", BOTH)
def test_the_policy_and_the_interpreter_agree(command: str, workdir: Path) -> None:
    assert CommandPolicy().check("Bash", {"command": command}, workdir) is not None
    assert text_verdict(command) == "extreme_destructive"


@pytest.mark.parametrize(
    "command", ["echo 'truncate the title'", "truncate -s 0 app.log", "rm -rf build # wipes / too"]
)
def test_routine_in_both(command: str, workdir: Path) -> None:
    assert extreme_destructive(command, workdir) is None
    assert extreme_destructive(command) is None


def test_a_workdir_resolves_paths_that_text_alone_cannot(workdir: Path) -> None:
    # scratch space is routine without a workdir; with one, anything outside it is held
    assert extreme_destructive("rm -rf /tmp/x") is None
    outside = extreme_destructive("rm -rf /tmp/x", workdir)
    assert outside is not None and "outside the working directory" in outside.reason
    # an absolute path inside the workdir is judged by what it is, not by being absolute
    assert extreme_destructive("rm -rf /srv/app/src/legacy") is not None
    assert extreme_destructive("rm -rf /srv/app/src/legacy", "/srv/app") is None
    # a filtered find over the workdir picks files; an unfiltered one deletes it
    assert extreme_destructive("find . -name '*.pyc' -delete", workdir) is None
    assert extreme_destructive("find . -delete", workdir) is not None
    # `cd` is followed with or without a workdir
    assert extreme_destructive("cd /var/lib && rm -rf postgresql") is not None
    assert extreme_destructive("(cd .. && rm -rf work)", workdir) is not None


def test_the_branch_decides_a_bare_force_push(workdir: Path) -> None:
    assert extreme_destructive("git push --force") is not None  # unknown: held
    assert extreme_destructive("git push --force-with-lease") is None
    assert extreme_destructive("git push --force", branch="feature/x") is None
    hit = extreme_destructive("git push -f origin HEAD", branch="main")
    assert hit is not None and hit.reason == "force-pushes the shared branch main"
    subprocess.run(["git", "init", "-q", "-b", "release/2.0"], cwd=workdir, check=True)
    found = extreme_destructive("git push --force", workdir)
    assert found is not None and found.rule == "git-force-push-shared"
    assert extreme_destructive("git push --force", workdir, protected_branches=["main"]) is None


def test_the_offending_part_and_statements() -> None:
    hit = extreme_destructive("cd api && npx prisma migrate reset --force")
    assert hit is not None and (hit.rule, hit.command) == (
        "db-reset",
        "npx prisma migrate reset --force",
    )
    assert (
        destructive_statement("then DROP TABLE IF EXISTS users; again")
        == "DROP TABLE IF EXISTS users"
    )
    assert destructive_statement("DELETE FROM sessions WHERE id = 1;") is None


@pytest.mark.parametrize("target", ["src/users", "lib/state", "app/media", "src/db"])
def test_code_folders_inside_the_workdir_are_routine(target: str, tmp_path: Path) -> None:
    assert extreme_destructive(f"rm -rf {target}", tmp_path) is None
    assert (
        extreme_destructive(f"rm -rf {tmp_path}/data", tmp_path) is not None
    )  # real data still held
