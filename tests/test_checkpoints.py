"""Checkpoints against real git repositories in temporary directories."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from orchestrator.checkpoints import CheckpointError, Checkpoints
from orchestrator.models import UserError

ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "user",
    "GIT_AUTHOR_EMAIL": "user@example.com",
    "GIT_COMMITTER_NAME": "user",
    "GIT_COMMITTER_EMAIL": "user@example.com",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True
    ).stdout


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def user_state(repo: Path) -> tuple[str, str, str, str]:
    """Everything of the user's that a checkpoint must leave alone."""
    return (
        git(repo, "status", "--porcelain", "--untracked-files=all"),
        git(repo, "rev-parse", "HEAD"),
        git(repo, "symbolic-ref", "HEAD"),
        git(repo, "ls-files", "--stage"),
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root / ".gitignore", "*.log\n.venv/\n.orchestrator/\n")
    write(root / "src" / "app.py", "print('v0')\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root


def run_folder(workdir: Path, run_id: str = "r1") -> Path:
    return workdir / ".orchestrator" / "runs" / run_id


def test_preflight_refuses_the_users_uncommitted_change(repo: Path) -> None:
    write(repo / "src" / "app.py", "print('mine, not committed')\n")
    write(repo / "notes.txt", "untracked counts too\n")
    write(repo / ".orchestrator" / "runs" / "r1" / "state.json", "{}")  # never counts
    cp = Checkpoints(repo, run_folder(repo), "r1")

    assert sorted(cp.is_dirty()) == ["notes.txt", "src/app.py"]
    with pytest.raises(UserError) as err:
        cp.preflight(allow_dirty=False)
    assert str(err.value) == (
        "workdir has uncommitted changes (2 files, e.g. src/app.py); "
        "commit or stash them, or pass --allow-dirty"
    )
    cp.preflight(allow_dirty=True)  # told to: no error


def test_preflight_passes_on_a_clean_tree_with_only_ignored_files(repo: Path) -> None:
    write(repo / "debug.log", "ignored\n")
    write(repo / ".orchestrator" / "state.db", "x")
    cp = Checkpoints(repo, run_folder(repo), "r1")
    assert cp.is_dirty() == []
    cp.preflight(allow_dirty=False)


def test_checkpoints_never_touch_the_users_head_index_branch_or_files(repo: Path) -> None:
    write(repo / "src" / "app.py", "print('user edit')\n")
    git(repo, "add", "src/app.py")  # staged by the user
    write(repo / "scratch.txt", "untracked by the user\n")
    before = user_state(repo)
    cp = Checkpoints(repo, run_folder(repo), "r1")

    start = cp.baseline()
    write(repo / "src" / "feature.py", "x = 1\n")
    cp.commit("1.1", "Task 1.1: feature")

    after = user_state(repo)
    assert after[1:] == before[1:]  # HEAD, current branch, the user's index
    # The only new entry in `git status` is the file the "task" wrote.
    assert set(after[0].splitlines()) == set(before[0].splitlines()) | {"?? src/feature.py"}
    assert (repo / "src" / "app.py").read_text() == "print('user edit')\n"
    # The first checkpoint sits on the user's HEAD and captured the user's uncommitted work.
    assert git(repo, "rev-parse", f"{start}^").strip() == before[1].strip()
    assert git(repo, "show", f"{start}:scratch.txt") == "untracked by the user\n"


def test_branch_holds_labelled_commits(repo: Path) -> None:
    cp = Checkpoints(repo, run_folder(repo), "run-42")
    start = cp.baseline()
    write(repo / "a.py", "a\n")
    one = cp.commit("1.1", "Task 1.1")
    write(repo / "b.py", "b\n")
    two = cp.commit("1.2", "Task 1.2")

    assert cp.list() == [("start", start), ("1.1", one), ("1.2", two)]
    assert cp.sha_of("1.1") == one
    assert git(repo, "rev-parse", "refs/heads/orchestrator/run-42").strip() == two
    message = git(repo, "log", "-1", "--format=%B", "orchestrator/run-42")
    assert "Orchestrator-Checkpoint: 1.2" in message
    assert cp.baseline() == start  # resume: the existing baseline, no second "start"
    with pytest.raises(CheckpointError, match=r"no checkpoint '9\.9'"):
        cp.sha_of("9.9")


def test_revert_restores_the_task_snapshot_and_spares_ignored_and_state(repo: Path) -> None:
    cp = Checkpoints(repo, run_folder(repo), "r1")
    cp.baseline()
    write(repo / "src" / "models.py", "class A: ...\n")
    write(repo / "src" / "app.py", "print('v1.1')\n")
    cp.commit("1.1", "Task 1.1")

    write(repo / "src" / "app.py", "print('v1.2')\n")
    write(repo / "src" / "pkg" / "export.py", "def export(): ...\n")
    (repo / "src" / "models.py").unlink()
    cp.commit("1.2", "Task 1.2")
    # An interrupted attempt of task 1.3 left more behind, plus ignored and state files.
    write(repo / "src" / "half_done.py", "partial\n")
    write(repo / "run.log", "ignored log\n")
    write(repo / ".venv" / "lib" / "x.py", "ignored venv\n")
    state = write(repo / ".orchestrator" / "runs" / "r1" / "attempt-1" / "out.txt", "keep")
    before = user_state(repo)[1:]

    new = cp.revert_to("1.1")

    assert (repo / "src" / "app.py").read_text() == "print('v1.1')\n"
    assert (repo / "src" / "models.py").read_text() == "class A: ...\n"
    assert not (repo / "src" / "pkg").exists()  # 1.2's file and its emptied folder are gone
    assert not (repo / "src" / "half_done.py").exists()
    assert (repo / "run.log").read_text() == "ignored log\n"
    assert (repo / ".venv" / "lib" / "x.py").read_text() == "ignored venv\n"
    assert state.read_text() == "keep"
    assert user_state(repo)[1:] == before
    assert cp.list()[-1] == ("revert-to-1.1", new)
    tree = lambda sha: git(repo, "rev-parse", f"{sha}^{{tree}}")  # noqa: E731
    assert tree(new) == tree(cp.sha_of("1.1"))


def test_revert_to_start_recovers_the_users_dirty_work(repo: Path) -> None:
    write(repo / "src" / "app.py", "print('user wip')\n")
    cp = Checkpoints(repo, run_folder(repo), "r1")
    cp.baseline()
    write(repo / "src" / "app.py", "print('agent rewrote it')\n")
    cp.commit("1.1", "Task 1.1")
    cp.revert_to("start")
    assert (repo / "src" / "app.py").read_text() == "print('user wip')\n"


def test_workdir_in_a_subfolder_of_the_repo(repo: Path) -> None:
    work = repo / "service"
    write(work / "main.py", "v0\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "service")
    write(repo / "outside.txt", "the user's, outside the workdir\n")
    cp = Checkpoints(work, run_folder(work), "r1")
    assert cp.is_dirty() == []  # outside.txt is not in the workdir
    cp.baseline()
    write(work / "new.py", "n\n")
    cp.commit("1.1", "Task 1.1")
    write(work / "main.py", "broken\n")
    cp.revert_to("start")
    assert (work / "main.py").read_text() == "v0\n"
    assert not (work / "new.py").exists()
    assert (repo / "outside.txt").read_text() == "the user's, outside the workdir\n"


def test_non_git_workdir_uses_a_private_repository(tmp_path: Path) -> None:
    work = tmp_path / "plain"
    write(work / "keep.txt", "v0\n")
    write(work / ".gitignore", "*.tmp\n")
    folder = run_folder(work)
    cp = Checkpoints(work, folder, "r7")
    assert cp.private and cp.is_dirty() == []
    cp.preflight(allow_dirty=False)
    cp.baseline()
    write(work / "keep.txt", "v1\n")
    write(work / "added.txt", "new\n")
    cp.commit("1.1", "Task 1.1")
    write(work / "scratch.tmp", "ignored\n")
    write(work / "keep.txt", "v2\n")

    cp.revert_to("start")

    assert (work / "keep.txt").read_text() == "v0\n"
    assert not (work / "added.txt").exists()
    assert (work / "scratch.tmp").exists()
    assert not (work / ".git").exists()
    private = ["git", "--git-dir", str(folder / "git")]
    branches = subprocess.run(
        [*private, "branch", "--list", "orchestrator/*"],
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "orchestrator/r7" in branches
    assert [label for label, _ in cp.list()] == ["start", "1.1", "revert-to-start"]


def test_resume_with_a_new_instance_continues_the_branch(repo: Path) -> None:
    cp = Checkpoints(repo, run_folder(repo), "r1")
    cp.baseline()
    write(repo / "a.py", "a\n")
    cp.commit("1.1", "Task 1.1")
    (run_folder(repo) / "checkpoints.index").unlink()  # even the temp index lost in a crash
    write(repo / "half.py", "left by the interrupted attempt\n")
    again = Checkpoints(repo, run_folder(repo), "r1")
    again.revert_to("1.1")
    assert not (repo / "half.py").exists()
    assert (repo / "a.py").read_text() == "a\n"


def test_missing_git_and_bad_run_id_are_one_line_errors(repo: Path) -> None:
    with pytest.raises(UserError, match="git is not installed"):
        Checkpoints(repo, run_folder(repo), "r1", git="no-such-git-binary")
    with pytest.raises(UserError, match="cannot be a git branch name"):
        Checkpoints(repo, run_folder(repo), "bad..id")


@pytest.mark.parametrize("ignored", [False, True])
def test_a_run_folder_elsewhere_in_the_workdir_is_never_snapshotted(
    repo: Path, ignored: bool
) -> None:
    if ignored:
        write(repo / ".gitignore", "runs/\n")
        git(repo, "commit", "-q", "-am", "ignore runs")
    folder = repo / "runs" / "r1"
    cp = Checkpoints(repo, folder, "r1")
    cp.baseline()
    artifact = write(folder / "attempt-1" / "out.txt", "artifact")
    write(repo / "a.py", "a\n")
    one = cp.commit("1.1", "Task 1.1")
    cp.revert_to("start")
    assert artifact.read_text() == "artifact"
    assert not (repo / "a.py").exists()
    files = git(repo, "ls-tree", "-r", "--name-only", one).split()
    assert "a.py" in files and not any(f.startswith("runs/") for f in files)


def _git_calls(cp: Checkpoints) -> list[list[str]]:
    """Record the git subcommands a Checkpoints instance runs (the real git still runs)."""
    calls: list[list[str]] = []
    real = cp._run

    def counting(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        calls.append(list(args))
        return real(*args, **kw)

    cp._run = counting  # type: ignore[method-assign]
    return calls


def test_an_unchanged_tree_makes_no_commit_and_its_label_still_resolves(repo: Path) -> None:
    cp = Checkpoints(repo, run_folder(repo), "r1")
    start = cp.baseline()
    write(repo / "a.py", "a\n")
    one = cp.commit("1.1", "Task 1.1")
    calls = _git_calls(cp)
    assert cp.commit("1.2", "Task 1.2: changed nothing") == one
    # no commit-tree/update-ref; write-tree only when git rewrote the index (racy timestamps)
    assert [c[0] for c in calls] in (["add"], ["add", "write-tree"])
    calls.clear()
    assert cp.commit("1.3", "Task 1.3: again nothing") == one
    assert [c[0] for c in calls] in (["add"], ["add", "write-tree"])
    calls.clear()
    write(repo / "b.py", "b\n")
    two = cp.commit("1.4", "Task 1.4")
    assert [c[0] for c in calls] == ["add", "write-tree", "commit-tree", "update-ref"]
    assert git(repo, "rev-parse", "refs/heads/orchestrator/r1").strip() == two
    assert git(repo, "rev-parse", f"{two}^").strip() == one  # no commit in between

    again = Checkpoints(repo, run_folder(repo), "r1")  # a resumed run reads the labels back
    labels = [("start", start), ("1.1", one), ("1.2", one), ("1.3", one), ("1.4", two)]
    assert again.list() == labels
    again.revert_to("1.3")
    assert not (repo / "b.py").exists() and (repo / "a.py").exists()
