"""worktrees.py against real git: names, adoption, fast-forward, clean merge, conflict, CAS."""

from __future__ import annotations

from pathlib import Path

from tests.test_parallel import git, repo

from orchestrator.checkpoints import Checkpoints
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
