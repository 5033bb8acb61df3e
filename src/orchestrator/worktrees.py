"""Git worktrees for tasks run side by side (`--parallel N`), and their merges into the run branch.

Each task runs in `<run_folder>/worktrees/<task>` on the branch `orchestrator/<run>--<task>`,
started from the run branch's head (`Checkpoints.branch`). The names follow from the run and the
task alone, so a runner started after a crash finds every worktree its killed predecessor left
(`ours`) and adopts it (the task runs again there, on the files its cut-off attempt left) or
removes it (the task is done). When a task's gates pass, its work is committed on its branch
(plumbing: no hooks, never the user's index) and merged into the run branch: a fast-forward, or
a merge commit whose first parent is the run branch's head (so `Checkpoints.list` reads it as the
task's checkpoint). The run branch only moves by compare-and-swap under one lock.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
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
        out = self.git("worktree", "list", "--porcelain").stdout
        found: dict[str, Path] = {}
        path: Path | None = None
        for line in out.splitlines():
            if line.startswith("worktree "):
                path = Path(line[len("worktree ") :])
            elif line.startswith("branch ") and path is not None:
                name = line[len("branch refs/heads/") :]
                if name.startswith(f"{self.cp.branch}--"):
                    found[name] = path
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
        (adopted as it is), else a new one on the run branch's head."""
        wt = self._for(task_id)
        with self.lock:
            if wt.branch in self.ours() and wt.path.is_dir():
                self._unlock_index(wt)
                return wt, self.base(wt)
            self._drop(wt, keep_branch=True)
            tip = self.tip()
            self.root.mkdir(parents=True, exist_ok=True)
            self.git("worktree", "add", "-q", "-f", "-f", "-B", wt.branch, str(wt.path), tip)
            wt.workdir.mkdir(parents=True, exist_ok=True)
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
        removed = []
        with self.lock:
            self.git("worktree", "prune", check=False)
            for name, path in self.ours().items():
                if name not in wanted:
                    self._remove_tree(path)
            for name in self.branches():
                if name not in wanted:
                    self.git("update-ref", "-d", f"refs/heads/{name}", check=False)
                    removed.append(name)
            if self.root.is_dir():
                for folder in self.root.iterdir():  # a `worktree add` cut off half-way
                    if folder.is_dir() and not any(folder == self.path(t) for t in keep):
                        shutil.rmtree(folder, ignore_errors=True)
            self.git("worktree", "prune", check=False)
        return removed

    # -- internals ------------------------------------------------------------------------------
    def _drop(self, wt: Worktree, *, keep_branch: bool) -> None:
        self._remove_tree(wt.path)
        self.git("worktree", "prune", check=False)
        if not keep_branch:
            self.git("update-ref", "-d", f"refs/heads/{wt.branch}", check=False)

    def _remove_tree(self, path: Path) -> None:
        res = self.git("worktree", "remove", "-f", "-f", str(path), check=False)
        if res.returncode != 0 and path.exists():
            shutil.rmtree(path, ignore_errors=True)

    def _unlock_index(self, wt: Worktree) -> None:
        """A killed `git add` leaves the worktree's index locked (its processes are gone by now)."""
        gitdir = self.git("rev-parse", "--absolute-git-dir", cwd=wt.path, check=False)
        if gitdir.returncode == 0:
            Path(gitdir.stdout.strip(), "index.lock").unlink(missing_ok=True)
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
