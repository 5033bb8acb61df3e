"""worktrees.py against real git: names, adoption, fast-forward, clean merge, conflict, CAS."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.test_parallel import git, killing_git, repo

from orchestrator.checkpoints import CheckpointError, Checkpoints
from orchestrator.worktrees import Worktrees, slug


def setup(tmp: Path) -> tuple[Path, Checkpoints, Worktrees]:
    work = repo(tmp, {"shared.txt": "base\n"})
    cp = Checkpoints(work, tmp / "runs" / "r1", "r1")
    cp.baseline()
    return work, cp, Worktrees(cp)


def test_names_are_one_ref_component_and_one_folder() -> None:
    assert slug("1.2") == "1.2"
    assert slug("a/b c..d") == "a_b_c_d"
    assert slug("x.lock") == "x_lock"


def test_fast_forward_then_clean_merge_then_conflict(tmp_path: Path) -> None:
    work, cp, wts = setup(tmp_path)
    (a, base_a), (b, base_b), (c, base_c) = wts.open("A"), wts.open("B"), wts.open("C")
    assert base_a == base_b == base_c == wts.tip()
    (a.workdir / "a.txt").write_text("a\n")
    (b.workdir / "b.txt").write_text("b\n")
    (c.workdir / "shared.txt").write_text("from C\n")
    (a.workdir / "shared.txt").write_text("from A\n")
    m1 = wts.merge(wts.commit(a, base_a, "A", "Task A"), base_a, "A", "Task A")
    assert m1.fast_forward and m1.sha == wts.tip()
    m2 = wts.merge(wts.commit(b, base_b, "B", "Task B"), base_b, "B", "Task B")
    assert not m2.fast_forward and m2.sha == wts.tip()
    assert git(work, "rev-parse", f"{m2.sha}^1").strip() == m1.sha  # first parent: the run branch
    m3 = wts.merge(wts.commit(c, base_c, "C", "Task C"), base_c, "C", "Task C")
    assert m3.sha is None and m3.conflicts == ["shared.txt"]
    assert wts.tip() == m2.sha  # a conflict moves nothing
    assert [label for label, _ in cp.list()] == ["start", "A", "B"]


def test_advance_is_a_compare_and_swap(tmp_path: Path) -> None:
    _, _, wts = setup(tmp_path)
    (a, base_a), (b, base_b) = wts.open("A"), wts.open("B")
    (a.workdir / "a.txt").write_text("a\n")
    (b.workdir / "b.txt").write_text("b\n")
    held = wts.merge(wts.commit(a, base_a, "A", "A"), base_a, "A", "A", move=False)
    wts.merge(wts.commit(b, base_b, "B", "B"), base_b, "B", "B")  # the branch moves meanwhile
    assert not wts.advance(held)


def test_a_worktree_left_behind_is_adopted_and_tidy_removes_the_rest(tmp_path: Path) -> None:
    work, _, wts = setup(tmp_path)
    a, base = wts.open("A")
    (a.workdir / "half.txt").write_text("cut off\n")
    again, base_again = Worktrees(wts.cp).open("A")  # a new runner
    assert again.path == a.path and base_again == base
    assert (again.workdir / "half.txt").read_text() == "cut off\n"
    wts.open("B")
    wts.tidy(keep={"A"})
    assert list(wts.ours()) == [wts.branch("A")]
    wts.tidy(keep=set())
    assert wts.ours() == {} and wts.branches() == []
    assert not (tmp_path / "runs" / "r1" / "worktrees" / "A").exists()
    assert len(git(work, "worktree", "list").splitlines()) == 1


@pytest.mark.parametrize("step", ["symbolic-ref", "reset", "reset-partway"])
def test_a_worktree_whose_add_was_killed_is_made_again_not_adopted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """`git worktree add` registers the worktree before it checks the files out: adopted as it
    is, its commit would delete from the run branch every file it lacks (issue 12's data loss)."""
    work, cp, wts = setup(tmp_path)
    a, base_a = wts.open("A")
    (a.workdir / "a.txt").write_text("a\n")
    wts.merge(wts.commit(a, base_a, "A", "Task A"), base_a, "A", "Task A")
    wts.remove("A")
    with monkeypatch.context() as m:
        for key, value in killing_git(tmp_path, step, who="parent").items():
            m.setenv(key, value)
        with pytest.raises(CheckpointError):
            Worktrees(cp).open("B")  # its runner killed mid-`worktree add`
    assert wts.path("B").is_dir()  # what the killed add left: registered, with few files or none
    b, base_b = Worktrees(cp).open("B")  # the next runner
    assert base_b == wts.tip()
    assert sorted(p.name for p in b.workdir.iterdir() if p.name != ".git") == [
        ".gitignore",
        "a.txt",
        "shared.txt",
    ]
    (b.workdir / "b.txt").write_text("b\n")
    merged = wts.merge(wts.commit(b, base_b, "B", "Task B"), base_b, "B", "Task B")
    assert merged.sha == wts.tip()
    tree = git(work, "ls-tree", "--name-only", merged.sha).split()
    assert tree == [".gitignore", "a.txt", "b.txt", "shared.txt"]
    wts.tidy(keep=set())
    assert len(git(work, "worktree", "list").splitlines()) == 1 and wts.branches() == []


def test_a_killed_add_left_behind_is_removed_by_tidy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed before it pointed HEAD at its branch, the worktree is detached and stays locked
    ("initializing"), which `git worktree prune` never removes: tidy does."""
    work, cp, wts = setup(tmp_path)
    with monkeypatch.context() as m:
        for key, value in killing_git(tmp_path, "symbolic-ref", who="parent").items():
            m.setenv(key, value)
        with pytest.raises(CheckpointError):
            Worktrees(cp).open("B")
    assert "locked" in git(work, "worktree", "list", "--porcelain")
    wts.tidy(keep=set())
    assert len(git(work, "worktree", "list").splitlines()) == 1
    assert wts.branches() == [] and not wts.path("B").exists()


def test_a_removal_cut_off_half_way_is_never_adopted(tmp_path: Path) -> None:
    """The ready mark goes before the files do: a worktree whose removal was killed half-way
    (some files gone, still registered) is made again, not committed as it is."""
    _, cp, wts = setup(tmp_path)
    a, _ = wts.open("A")
    (a.workdir / "half.txt").write_text("cut off\n")
    wts._mark(a).unlink()  # `remove` takes the mark away first, then killed
    (a.workdir / "shared.txt").unlink()  # ... while git was deleting the files
    again, base = Worktrees(cp).open("A")
    assert base == wts.tip()
    assert sorted(p.name for p in again.workdir.iterdir() if p.name != ".git") == [
        ".gitignore",
        "shared.txt",
    ]


def test_a_branch_deletion_killed_leaves_no_lock_in_the_repository(tmp_path: Path) -> None:
    """git holds the repository's `packed-refs.lock` while it deletes any ref: a runner killed
    there would leave the user unable to delete a branch; the next runner's tidy removes it."""
    work, cp, wts = setup(tmp_path)
    wts.open("A")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook = hooks / "reference-transaction"  # runs once the refs (and packed-refs) are locked
    hook.write_text('#!/bin/sh\n[ "$1" = prepared ] && kill -9 0\nexit 0\n')
    hook.chmod(0o755)
    runner = (  # a runner removing A's worktree, its whole process group killed in `update-ref -d`
        "import sys; from pathlib import Path; from orchestrator.checkpoints import Checkpoints; "
        "from orchestrator.worktrees import Worktrees; "
        "Worktrees(Checkpoints(Path(sys.argv[1]), Path(sys.argv[2]), 'r1')).remove('A')"
    )
    env = {
        **os.environ,
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.hooksPath",
        "GIT_CONFIG_VALUE_0": str(hooks),
    }
    args = [sys.executable, "-c", runner, str(work), str(cp.run_folder)]
    killed = subprocess.run(args, env=env, start_new_session=True, check=False)
    assert killed.returncode == -signal.SIGKILL
    lock = work / ".git" / "packed-refs.lock"
    assert lock.exists() and wts.branches() == [wts.branch("A")]
    other = work / ".git" / "refs" / "heads" / "user-branch.lock"  # none of ours: left alone
    other.write_text("")
    Worktrees(cp).tidy(keep=set())  # the next runner
    assert not lock.exists() and wts.branches() == [] and other.exists()
    git(work, "branch", "-q", "topic")
    git(work, "branch", "-q", "-d", "topic")  # the user's git works as before


def test_a_packed_refs_lock_not_left_by_us_is_never_touched(tmp_path: Path) -> None:
    work, _, wts = setup(tmp_path)
    wts.open("A")
    lock = work / ".git" / "packed-refs.lock"  # the user's own git, or another tool's
    lock.write_text("")
    wts.tidy(keep=set())
    assert lock.exists()
    lock.unlink()


def test_a_branch_left_locked_by_a_killed_git_does_not_stop_the_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`worktree add -B` first moves the task's branch (`git branch -f`): killed while it holds
    the branch's lock, it leaves `<branch>.lock`, which would fail every later `open` of it."""
    work, cp, wts = setup(tmp_path)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    hook = hooks / "reference-transaction"
    hook.write_text('#!/bin/sh\n[ "$1" = prepared ] && kill -9 $PPID\nexit 0\n')
    hook.chmod(0o755)
    with monkeypatch.context() as m:
        m.setenv("GIT_CONFIG_COUNT", "1")
        m.setenv("GIT_CONFIG_KEY_0", "core.hooksPath")
        m.setenv("GIT_CONFIG_VALUE_0", str(hooks))
        with pytest.raises(CheckpointError):
            Worktrees(cp).open("A")
    assert (work / ".git" / "refs" / "heads" / f"{wts.branch('A')}.lock").exists()
    a, base = Worktrees(cp).open("A")
    assert base == wts.tip() and (a.workdir / "shared.txt").exists()
