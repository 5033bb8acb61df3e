"""Git worktrees for tasks run side by side (`--parallel N`), and their merges into the run branch.

Each task runs in `<run_folder>/worktrees/<task>` on the branch `orchestrator/<run>--<task>`,
started from the run branch's head (`Checkpoints.branch`). The names follow from the run and the
task alone, so a runner started after a crash finds every worktree its killed predecessor left
(`ours`) and adopts it (the task runs again there, on the files its cut-off attempt left) or
removes it (the task is done). When a task's gates pass, its work is committed on its branch
(plumbing: no hooks, never the user's index) and merged into the run branch: a fast-forward, or
a merge commit whose first parent is the run branch's head (so `Checkpoints.list` reads it as the
task's checkpoint). The run branch only moves by compare-and-swap under one lock, from its value
read under that lock, to a commit whose first parent is that value.

A worktree is adopted only when it is whole: `git worktree add` registers the worktree (and points
it at its branch) *before* it checks the files out, so one killed half-way leaves a registered
worktree holding some of the run branch's files, or none, and no index. Committed as it is, that
worktree would delete every missing file from the run branch at the merge, while the task is
recorded COMPLETED. So `open` marks a worktree ready (`<worktrees>/.<task>.ready`) only once
`worktree add` has returned, and every removal takes the mark away *first*: a worktree without it
(an add or a removal cut off half-way) is removed and made again from the run branch's head. No
attempt has run in such a worktree (the attempt starts after the mark is made), so nothing is lost.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from orchestrator.agents import process
from orchestrator.checkpoints import (
    CHECKPOINT_TRAILER,
    RUN_TRAILER,
    CheckpointError,
    Checkpoints,
    run_git,
)

_IDENTITY = {
    "GIT_AUTHOR_NAME": "orchestrator",
    "GIT_AUTHOR_EMAIL": "orchestrator@localhost",
    "GIT_COMMITTER_NAME": "orchestrator",
    "GIT_COMMITTER_EMAIL": "orchestrator@localhost",
}
_EXCLUDE_STATE = ":(exclude,glob)**/.orchestrator/**"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(task_id: str) -> str:
    """A task id as one git ref component and one folder name (`1.2` stays `1.2`)."""
    s = _UNSAFE.sub("_", task_id).replace("..", "_").strip(".") or "_"
    return s[:-5] + "_lock" if s.endswith(".lock") else s


@dataclass
class Merge:
    """What bringing a task's commit into the run branch gave."""

    sha: str | None
    """The run branch's new head; None when the merge conflicted."""
    conflicts: list[str] = field(default_factory=list)
    fast_forward: bool = False
    onto: str | None = None
    """The run branch's head it was made on."""


@dataclass
class Worktree:
    task_id: str
    path: Path
    branch: str
    workdir: Path
    """Where the agent works: the worktree itself, or the run's workdir's place inside it."""


class Worktrees:
    """The worktrees of one run, in the repository its checkpoints use."""

    def __init__(self, checkpoints: Checkpoints) -> None:
        self.cp = checkpoints
        self.run_id = checkpoints.run_id
        self.root = checkpoints.run_folder / "worktrees"
        self.git_dir = str(checkpoints.git_dir)
        self.lock = threading.Lock()
        """Held while the run branch moves (merges) and while worktrees are added or removed."""
        self._deleting = checkpoints.run_folder / "worktrees.deleting"
        git = shutil.which("git")
        if git is None:
            raise CheckpointError("git is not installed; --parallel needs git")
        self._git = git
        drop = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX")
        self._env = {k: v for k, v in os.environ.items() if k not in drop}
        self._env.update(_IDENTITY, LC_ALL="C", GIT_TERMINAL_PROMPT="0")

    # -- names ----------------------------------------------------------------------------------
    def branch(self, task_id: str) -> str:
        return f"{self.cp.branch}--{slug(task_id)}"

    def path(self, task_id: str) -> Path:
        return self.root / slug(task_id)

    def _for(self, task_id: str) -> Worktree:
        path = self.path(task_id)
        return Worktree(task_id, path, self.branch(task_id), path / self.cp.prefix)

    # -- what exists ----------------------------------------------------------------------------
    def ours(self) -> dict[str, Path]:
        """Registered worktrees of this run: {branch: path}."""
        prefix = f"{self.cp.branch}--"
        return {b: p for p, b in self._listed() if b is not None and b.startswith(prefix)}

    def _listed(self) -> list[tuple[Path, str | None]]:
        """Every registered worktree of the repository: (path, branch; None when detached, as
        one whose `worktree add` was killed before it pointed it at its branch)."""
        out = self.git("worktree", "list", "--porcelain").stdout
        found: list[tuple[Path, str | None]] = []
        for line in out.splitlines():
            if line.startswith("worktree "):
                found.append((Path(line[len("worktree ") :]), None))
            elif line.startswith("branch refs/heads/") and found:
                found[-1] = (found[-1][0], line[len("branch refs/heads/") :])
        return found

    def branches(self) -> list[str]:
        out = self.git(
            "for-each-ref", "--format=%(refname:short)", f"refs/heads/{self.cp.branch}--*"
        ).stdout
        return [b for b in out.split() if b]

    def tip(self) -> str:
        sha = self.git("rev-parse", "--verify", "-q", self.cp.ref, check=False).stdout.strip()
        if not sha:
            raise CheckpointError(f"run branch {self.cp.branch} is missing")
        return sha

    # -- one task's worktree --------------------------------------------------------------------
    def open(self, task_id: str) -> tuple[Worktree, str]:
        """The task's worktree and the commit its work starts from: the one a killed runner left
        (adopted as it is) when it is whole, else a new one on the run branch's head."""
        wt = self._for(task_id)
        with self.lock:
            if self._whole(wt):
                self._unlock_index(wt)
                return wt, self.base(wt)
            self._drop(wt, keep_branch=True)
            tip = self.tip()
            self.root.mkdir(parents=True, exist_ok=True)
            self.git("worktree", "add", "-q", "-f", "-f", "-B", wt.branch, str(wt.path), tip)
            wt.workdir.mkdir(parents=True, exist_ok=True)
            self._mark(wt).touch()  # whole: from now on a killed runner's worktree is adopted
            return wt, tip

    def base(self, wt: Worktree) -> str:
        """Where the task's branch left the run branch."""
        return self.git("merge-base", wt.branch, self.cp.ref).stdout.strip()

    def commit(self, wt: Worktree, base: str, label: str, message: str) -> str:
        """The worktree's files as one commit on the task's branch, labelled as the task's
        checkpoint (a commit even when nothing changed: every completed task has its label)."""
        self.git("add", "-A", "--", ".", _EXCLUDE_STATE, cwd=wt.workdir)
        tree = self.git("write-tree", cwd=wt.workdir).stdout.strip()
        sha = self._commit_tree(tree, [base], label, message)
        self.git("update-ref", f"refs/heads/{wt.branch}", sha)
        return sha

    def merge(
        self, commit: str, base: str, label: str, message: str, *, move: bool = True
    ) -> Merge:
        """Bring `commit` into the run branch: a fast-forward when the branch has not moved since
        `base`, else a clean merge; conflicting paths otherwise (the branch does not move). With
        `move=False` the merge commit is made but the branch stays (`advance` moves it)."""
        with self.lock:
            tip = self.tip()
            if tip == base:
                if move:
                    self._move(commit, tip)
                return Merge(commit, fast_forward=True, onto=tip)
            res = self.git(
                "merge-tree",
                "--write-tree",
                "--name-only",
                "--no-messages",
                tip,
                commit,
                check=False,
            )
            lines = res.stdout.splitlines()
            if res.returncode == 1:
                files = [ln for ln in lines[1:] if ln.strip()]
                return Merge(None, conflicts=list(dict.fromkeys(files)), onto=tip)
            if res.returncode != 0 or not lines:
                raise CheckpointError(f"git merge-tree failed: {res.stderr.strip()[:200]}")
            sha = self._commit_tree(lines[0], [tip, commit], label, message)
            if move:
                self._move(sha, tip)
            return Merge(sha, onto=tip)

    def advance(self, merge: Merge) -> bool:
        """Move the run branch to a merge made with `move=False`, unless it moved meanwhile."""
        assert merge.sha is not None and merge.onto is not None
        with self.lock:
            if self.tip() != merge.onto:
                return False
            self._move(merge.sha, merge.onto)
            return True

    def label(self, label: str, message: str) -> str:
        """A checkpoint for a task completed without work of its own (a human's `done`, the
        milestone's checks passing): a commit of the head's own tree."""
        with self.lock:
            tip = self.tip()
            tree = self.git("rev-parse", f"{tip}^{{tree}}").stdout.strip()
            sha = self._commit_tree(tree, [tip], label, message)
            self._move(sha, tip)
            return sha

    def remove(self, task_id: str, *, keep_branch: bool = False) -> None:
        with self.lock:
            self._drop(self._for(task_id), keep_branch=keep_branch)

    def tidy(self, keep: set[str]) -> list[str]:
        """Remove every worktree and branch of this run but those of the tasks in `keep` (work
        a resume adopts); returns the branches removed."""
        wanted = {self.branch(t) for t in keep}
        kept = {self.path(t) for t in keep} | {self._mark(self._for(t)) for t in keep}
        removed = []
        with self.lock:
            self._stale_locks()
            if self.root.is_dir():  # the marks go first: a removal cut off is never adopted
                for mark in self.root.glob(".*.ready"):
                    if mark not in kept:
                        mark.unlink(missing_ok=True)
            self.git("worktree", "prune", check=False)
            prefix, root = f"{self.cp.branch}--", self.root.resolve()
            for path, name in self._listed():
                if name is not None and name.startswith(prefix):
                    if name not in wanted:
                        self._remove_tree(path)
                elif path.parent.resolve() == root and path not in kept:
                    self._remove_tree(path)  # detached: its `worktree add` was cut off early
            for name in self.branches():
                if name not in wanted:
                    self._delete_branch(name)
                    removed.append(name)
            if self.root.is_dir():
                for folder in self.root.iterdir():  # a `worktree add` cut off half-way
                    if folder.is_dir() and folder not in kept:
                        shutil.rmtree(folder, ignore_errors=True)
            self.git("worktree", "prune", check=False)
        return removed

    # -- internals ------------------------------------------------------------------------------
    def _mark(self, wt: Worktree) -> Path:
        """Made once `worktree add` has returned; taken away before the worktree is removed."""
        return wt.path.with_name(f".{wt.path.name}.ready")

    def _whole(self, wt: Worktree) -> bool:
        """The task's worktree is registered on its branch, there, and was made whole."""
        path = self.ours().get(wt.branch)
        return (
            path is not None
            and path.resolve() == wt.path.resolve()
            and (wt.path / ".git").is_file()
            and self._mark(wt).is_file()
        )

    def _drop(self, wt: Worktree, *, keep_branch: bool) -> None:
        self._mark(wt).unlink(missing_ok=True)
        self._remove_tree(wt.path)
        self.git("worktree", "prune", check=False)
        Path(self.git_dir, f"refs/heads/{wt.branch}.lock").unlink(missing_ok=True)  # a killed git's
        if not keep_branch:
            self._delete_branch(wt.branch)

    def _delete_branch(self, name: str) -> None:
        """Delete a task's branch. git takes the repository's `packed-refs.lock` for every ref it
        deletes, so a runner killed here would leave the user's repository unable to delete a
        branch: the deletion is noted first (`worktrees.deleting`), and `tidy` at the next start
        removes the lock it left (`_stale_locks`)."""
        Path(self.git_dir, f"refs/heads/{name}.lock").unlink(missing_ok=True)
        self._deleting.parent.mkdir(parents=True, exist_ok=True)
        self._deleting.write_text(name, encoding="utf-8")
        self.git("update-ref", "-d", f"refs/heads/{name}", check=False)
        self._deleting.unlink(missing_ok=True)

    def _stale_locks(self) -> None:
        """Remove the `packed-refs.lock` a runner killed while it deleted a branch left: one made
        within seconds after it noted the deletion, and still there a second after it was made
        (git holds it for milliseconds, and gives up waiting for it after one second)."""
        if not self._deleting.exists():
            return
        noted = self._deleting.stat().st_mtime
        path = Path(self.git("rev-parse", "--git-path", "packed-refs.lock").stdout.strip())
        lock = path if path.is_absolute() else Path(self.git_dir, path)
        try:
            made = lock.stat().st_mtime
            if noted - 1.0 <= made <= noted + 10.0:
                time.sleep(max(0.0, made + 1.0 - time.time()))
                if lock.stat().st_mtime == made:
                    lock.unlink()
        except FileNotFoundError:
            pass
        self._deleting.unlink(missing_ok=True)

    def _remove_tree(self, path: Path) -> None:
        """Remove a worktree of ours, whole or not: one whose `worktree add` was killed is still
        locked ("initializing"), and `prune` leaves a locked worktree registered."""
        res = self.git("worktree", "remove", "-f", "-f", str(path), check=False)
        if res.returncode != 0:
            self.git("worktree", "unlock", str(path), check=False)
            if path.exists():
                shutil.rmtree(path, ignore_errors=True)

    def _unlock_index(self, wt: Worktree) -> None:
        """A killed `git add` leaves the worktree's index locked (its processes are gone by now).
        The worktree's own git dir is read from its `.git` file (never discovered: a worktree
        under the user's repository without one would find the user's index)."""
        text = (wt.path / ".git").read_text(encoding="utf-8", errors="surrogateescape")
        if text.startswith("gitdir: "):
            admin = Path(text[len("gitdir: ") :].strip())
            if admin.parent.name == "worktrees":
                (admin / "index.lock").unlink(missing_ok=True)
        Path(self.git_dir, f"refs/heads/{wt.branch}.lock").unlink(missing_ok=True)

    def _commit_tree(self, tree: str, parents: list[str], label: str, message: str) -> str:
        body = f"{message.strip() or label}\n\n{CHECKPOINT_TRAILER}: {label}\n{RUN_TRAILER}: {self.run_id}\n"
        args = ["commit-tree", "--no-gpg-sign", tree]
        for p in parents:
            args += ["-p", p]
        return self.git(*args, input=body).stdout.strip()

    def _move(self, sha: str, old: str) -> None:
        self.git("update-ref", "-m", "merge", self.cp.ref, sha, old)
        self.cp.reread()

    def git(
        self, *args: str, cwd: Path | None = None, check: bool = True, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        """git on the run's repository, or inside a worktree when `cwd` is one of its folders."""
        where = ["-C", str(cwd)] if cwd is not None else ["--git-dir", self.git_dir]
        return run_git(
            [self._git, "-c", "core.fsmonitor=false", *where, *args],
            env={**self._env, **process.mark_vars()},
            cwd=None,
            input=input,
            check=check,
            what=f"worktree: git {args[0]}",
        )
