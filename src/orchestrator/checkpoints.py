"""Checkpoints: a git commit of the workdir after every completed task, so plan revert is real.

Commits go to the branch `orchestrator/<run-id>` and are made with plumbing only (a temporary
index in the run folder, `add -A`, `write-tree`, `commit-tree`, `update-ref`): the user's HEAD,
index, current branch and working files are never touched by a checkpoint. A workdir inside a
git repository uses that repository (the first checkpoint's parent is the user's HEAD); any
other workdir gets a private repository at `<run_folder>/git`.

`preflight` refuses to start a run on a dirty tree, because a revert rewrites working files.
It is for a *new* run only: on resume the lead does not call it, since the files left by the
run's own interrupted attempt are exactly what the next checkpoint or revert deals with.
`is_dirty` is there for a caller that wants to show them.

Crash-safe: a runner killed inside a git command leaves at most a stale lock of the private index
(`<run_folder>/checkpoints.index.lock`) or of the run's own ref; `clean_locks` removes them when the
next runner starts (it holds the run lock, and the killed runner's processes are gone by then), so
nothing stays locked in the user's `.git`. A task completed but not yet committed is made up by the
observer (`observers/checkpoints.py`).

A checkpoint costs one `git add -A` when nothing changed (plus a `write-tree` when git rewrote the
index anyway, e.g. for files touched in the same second): no commit is made, and the label is
noted in `<run_folder>/checkpoints.labels` against the tip, so `list`/`sha_of`/`revert_to` still
find it. A change costs `add`, `write-tree`, `commit-tree` and `update-ref`; the tip is read once.
"""

from __future__ import annotations

import builtins
import os
import re
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from orchestrator.agents import process
from orchestrator.models import UserError

__all__ = ["CHECKPOINT_TRAILER", "START_LABEL", "CheckpointError", "Checkpoints"]

CHECKPOINT_TRAILER = "Orchestrator-Checkpoint"
RUN_TRAILER = "Orchestrator-Run"
START_LABEL = "start"

# Whatever lives in a `.orchestrator/` folder (state, run folders, logs) is never snapshotted,
# reverted or counted as a user change.
_EXCLUDE_STATE = ":(exclude,glob)**/.orchestrator/**"

_IDENTITY = {
    "GIT_AUTHOR_NAME": "orchestrator",
    "GIT_AUTHOR_EMAIL": "orchestrator@localhost",
    "GIT_COMMITTER_NAME": "orchestrator",
    "GIT_COMMITTER_EMAIL": "orchestrator@localhost",
}
# Variables that would point git at another repository, index or object store than ours.
_REPO_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)
_TRAILER_LINE = re.compile(rf"^{CHECKPOINT_TRAILER}:\s*(.+?)\s*$", re.MULTILINE)
_RUN_LINE = re.compile(rf"^{RUN_TRAILER}:\s*(.+?)\s*$", re.MULTILINE)
_UNREAD = "unread"
"""The tip not yet read from git (it is cached once read: only this run writes its branch)."""


class CheckpointError(UserError):
    """git is missing, or a git command failed; shown as one line."""


def _check_label(label: str) -> None:
    if "\n" in label or not label.strip():
        raise CheckpointError(f"invalid checkpoint label {label!r}")


class Checkpoints:
    """Snapshots of one run's workdir on the branch `orchestrator/<run_id>`.

    >>> cp = Checkpoints(Path("proj"), Path("proj/.orchestrator/runs/r1"), "r1")  # doctest: +SKIP
    >>> cp.preflight(allow_dirty=False); cp.baseline(); cp.commit("1.1", "Task 1.1 done")
    >>> cp.revert_to("start")  # the workdir's files are back to the run's start
    """

    def __init__(self, workdir: Path, run_folder: Path, run_id: str, *, git: str = "git") -> None:
        self.workdir = Path(workdir).resolve()
        self.run_folder = Path(run_folder).resolve()
        self.run_id = run_id
        self.branch = f"orchestrator/{run_id}"
        self.ref = f"refs/heads/{self.branch}"
        exe = shutil.which(git)
        if exe is None:
            raise CheckpointError(
                f"git is not installed (no `{git}` on PATH); install git, "
                "or set checkpoints = false to run without plan revert"
            )
        if not self.workdir.is_dir():
            raise CheckpointError(f"workdir {self.workdir} does not exist")
        self._git = exe
        self._env = {k: v for k, v in os.environ.items() if k not in _REPO_ENV}
        self._env.update(_IDENTITY, LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0")
        self._index = self.run_folder / "checkpoints.index"
        self._aliases = self.run_folder / "checkpoints.labels"
        self._tip_sha: str | None = _UNREAD
        self._tip_tree: str | None = None
        self._settled: tuple[int, ...] | None = None
        """The index file's identity right after the last checkpoint: equal means no change."""

        if not self._probe_ok("check-ref-format", self.ref):
            raise CheckpointError(f"run id {run_id!r} cannot be a git branch name")
        top = self._probe("rev-parse", "--show-toplevel")
        ignored = top is not None and self._probe_ok("check-ignore", "-q", "--", ".")
        if top is not None and not ignored:
            self.private = False
            git_dir = self._probe("rev-parse", "--absolute-git-dir")
            assert git_dir is not None  # a work tree always has one
            self._git_dir = Path(git_dir)
            self._repo = ["--git-dir", git_dir, "--work-tree", top]
            self.prefix = (self._probe("rev-parse", "--show-prefix") or "").strip()
        else:
            self.private = True
            git_dir = str(self.run_folder / "git")
            self._git_dir = Path(git_dir)
            self._repo = ["--git-dir", git_dir, "--work-tree", str(self.workdir)]
            self.prefix = ""
            if not (Path(git_dir) / "HEAD").exists():
                self.run_folder.mkdir(parents=True, exist_ok=True)
                self._run("init", "-q")
        self._pathspec = ["--", ".", _EXCLUDE_STATE, *self._extra_excludes()]

    # -- public API -----------------------------------------------------------------------------
    def is_dirty(self) -> builtins.list[str]:
        """Workdir-relative paths with uncommitted changes (untracked files count), in the
        user's repository; a private repository has no user commits, so nothing is dirty."""
        if self.private:
            return []
        out = self._run(
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            *self._pathspec,
            user_index=True,
        ).stdout
        paths: builtins.list[str] = []
        fields = out.split("\0")
        i = 0
        while i < len(fields):
            entry = fields[i]
            i += 1
            if len(entry) < 4:
                continue
            if entry[0] in "RC":  # a rename or copy is followed by its source path
                i += 1
            paths.append(self._relative(entry[3:]))
        return paths

    def preflight(self, allow_dirty: bool) -> None:
        """Refuse a new run on a dirty tree (not on resume: see the module docstring)."""
        if allow_dirty:
            return
        dirty = self.is_dirty()
        if dirty:
            count = f"{len(dirty)} file" + ("" if len(dirty) == 1 else "s")
            raise UserError(
                f"workdir has uncommitted changes ({count}, e.g. {dirty[0]}); "
                "commit or stash them, or pass --allow-dirty"
            )

    def baseline(self) -> str:
        """The snapshot at run start (label "start"); on resume, the existing one."""
        existing = self._find(START_LABEL)
        return existing if existing else self.commit(START_LABEL, "Run start")

    def commit(self, label: str, message: str) -> str:
        """Snapshot the workdir as it is now (label = the completed task's id); returns the sha
        (the tip's when nothing changed since it: see the module docstring)."""
        _check_label(label)
        self._stage()
        return self._snapshot(label, message)

    def revert_to(self, label: str) -> str:
        """Make the workdir's files equal to the snapshot `label`, then record the result as a
        new checkpoint "revert-to-<label>" and return its sha.

        Every file of the snapshot is written back; files of the latest snapshot or of the
        current tree that the snapshot lacks are deleted. Ignored files and `.orchestrator/`
        are never deleted.
        """
        target = self.sha_of(label)
        self._write_files(target)
        return self._snapshot(f"revert-to-{label}", f"Revert workdir to checkpoint {label}")

    def sync_to_tip(self) -> None:
        """Make the workdir's files equal to the run branch's head, recording nothing: where
        `--parallel` runs leave the user's tree, the tasks having worked in worktrees."""
        tip = self._tip()
        if tip is not None:
            self._write_files(tip)
            self._settled = self._index_identity()

    def reread(self) -> None:
        """The run branch was moved by someone else (a merge of `worktrees.py`): read it again."""
        self._tip_sha, self._settled = _UNREAD, None

    @property
    def git_dir(self) -> Path:
        return self._git_dir

    def _write_files(self, target: str) -> None:
        """The workdir's files as in commit `target` (see `revert_to`); the index follows."""
        latest = self._tip()
        self._stage()  # the current tree, including files the interrupted attempt created
        current = set(self._ls_index())
        if latest:
            current |= set(self._ls_tree(latest))
        wanted = set(self._ls_tree(target))
        doomed = sorted(p for p in current - wanted if not self._protected(p))
        ignored = set(self._ignored(doomed))
        doomed = [p for p in doomed if p not in ignored]
        for rel in doomed:
            path = self.workdir / rel
            if path.is_symlink() or path.is_file():
                path.unlink()
                self._prune_empty_parents(path.parent)
        self._run("read-tree", target)
        if wanted:
            self._run(
                "checkout-index", "-f", "-u", "-z", "--stdin", input="\0".join(sorted(wanted))
            )
        self._stage()

    def clean_locks(self) -> builtins.list[Path]:
        """Remove the lock files a killed git left: the private index's, this run's ref's (in
        whichever repository), and in a private repository any of its own. Only for a runner that
        holds the run lock, after the killed runner's processes are gone; returns what it removed."""
        stale = [
            self._index.with_name(self._index.name + ".lock"),
            self._git_dir / f"{self.ref}.lock",
        ]
        if self.private:
            stale += [*self._git_dir.glob("*.lock"), *self._git_dir.glob("refs/**/*.lock")]
        removed = []
        for path in dict.fromkeys(stale):
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
        if removed:
            self._tip_sha, self._settled = _UNREAD, None  # read the branch again
        return removed

    def sha_of(self, label: str) -> str:
        """The newest checkpoint with this label; CheckpointError when there is none."""
        sha = self._find(label)
        if sha is None:
            known = ", ".join(dict.fromkeys(lbl for lbl, _ in self.list())) or "none"
            raise CheckpointError(
                f"run {self.run_id} has no checkpoint {label!r} (checkpoints: {known})"
            )
        return sha

    def list(self) -> builtins.list[tuple[str, str]]:
        """(label, sha) of this run's checkpoints, oldest first (a label noted without a commit
        comes right after the commit it shares its tree with)."""
        tip = self._tip()
        if tip is None:
            return []
        noted: dict[str, builtins.list[str]] = {}
        if self._aliases.exists():
            for row in self._aliases.read_text(encoding="utf-8").splitlines():
                sha, _, lbl = row.partition(" ")
                if lbl:
                    noted.setdefault(sha, []).append(lbl)
        out = self._run("log", "--first-parent", "--format=%H%x00%B%x1e", tip).stdout
        found: builtins.list[tuple[str, str]] = []
        for record in out.split("\x1e"):
            sha, _, body = record.strip("\n").partition("\0")
            run = _RUN_LINE.search(body)
            label = _TRAILER_LINE.search(body)
            if not sha or run is None or run.group(1) != self.run_id or label is None:
                break  # the user's history before the run's first checkpoint
            found += [(lbl, sha) for lbl in reversed(noted.get(sha, []))]
            found.append((label.group(1), sha))
        found.reverse()
        return found

    # -- internals ------------------------------------------------------------------------------
    def _extra_excludes(self) -> builtins.list[str]:
        """Keep the run folder out of the snapshot even when it is not under `.orchestrator/`."""
        try:
            rel = self.run_folder.relative_to(self.workdir)
        except ValueError:
            return []
        if not rel.parts or ".orchestrator" in rel.parts:
            return []  # covered by _EXCLUDE_STATE
        if self._run("check-ignore", "-q", "--", rel.as_posix(), check=False).returncode == 0:
            return []  # ignored already (and `git add` fails on a pathspec naming ignored files)
        return [f":(exclude,literal){rel.as_posix()}"]

    def _find(self, label: str) -> str | None:
        for lbl, sha in reversed(self.list()):
            if lbl == label:
                return sha
        return None

    def _tip(self) -> str | None:
        if self._tip_sha == _UNREAD:
            out = self._run("for-each-ref", "--count=1", "--format=%(objectname) %(tree)", self.ref)
            sha, _, tree = out.stdout.strip().partition(" ")
            self._tip_sha, self._tip_tree = (sha, tree) if sha else (None, None)
        return self._tip_sha

    def _index_identity(self) -> tuple[int, ...] | None:
        """Which index file this is: git rewrites it by rename, and its last bytes are a hash."""
        try:
            with self._index.open("rb") as fh:
                st = os.fstat(fh.fileno())
                fh.seek(max(0, st.st_size - 32))
                digest = int.from_bytes(fh.read(), "big")
        except FileNotFoundError:
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, digest)

    def _snapshot(self, label: str, message: str) -> str:
        """Record the staged index as checkpoint `label`: a commit only when the tree changed."""
        tip = self._tip()
        if (
            tip is not None
            and self._settled is not None
            and self._settled == self._index_identity()
        ):
            return self._note(label, tip)
        tree = self._run("write-tree").stdout.strip()
        if tip is not None and tree == self._tip_tree:
            self._settled = self._index_identity()
            return self._note(label, tip)
        sha = self._record(label, message, tree)
        self._settled = self._index_identity()
        return sha

    def _note(self, label: str, sha: str) -> str:
        """Label the unchanged tip without a commit."""
        with self._aliases.open("a", encoding="utf-8") as fh:
            fh.write(f"{sha} {label}\n")
        return sha

    def _stage(self) -> None:
        """Bring the temporary index up to the workdir's current files."""
        if not self._index.exists():
            self.run_folder.mkdir(parents=True, exist_ok=True)
            base = self._tip() or self._user_head()
            if base:
                self._run("read-tree", base)
            else:
                self._run("read-tree", "--empty")
        self._run("add", "-A", *self._pathspec)

    def _user_head(self) -> str | None:
        if self.private:
            return None
        res = self._run("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False)
        return (res.stdout.strip() or None) if res.returncode == 0 else None

    def _record(self, label: str, message: str, tree: str) -> str:
        old = self._tip()
        parent = old or self._user_head()
        body = (
            f"{message.strip() or label}\n\n{CHECKPOINT_TRAILER}: {label}\n"
            f"{RUN_TRAILER}: {self.run_id}\n"
        )
        args = ["commit-tree", "--no-gpg-sign", tree]
        if parent:
            args += ["-p", parent]
        sha = self._run(*args, input=body).stdout.strip()
        # Compare-and-swap against the tip we built on (all zeros: the branch must not exist).
        self._tip_sha = _UNREAD  # should the swap fail, read the branch again next time
        self._run("update-ref", "-m", f"checkpoint {label}", self.ref, sha, old or "0" * 40)
        self._tip_sha, self._tip_tree = sha, tree
        return sha

    def _ls_tree(self, commit: str) -> builtins.list[str]:
        out = self._run("ls-tree", "-r", "-z", "--full-name", "--name-only", commit, "--", ".")
        return [self._relative(p) for p in out.stdout.split("\0") if p]

    def _ls_index(self) -> builtins.list[str]:
        out = self._run("ls-files", "-z", "--full-name", "--", ".")
        return [self._relative(p) for p in out.stdout.split("\0") if p]

    def _ignored(self, paths: Sequence[str]) -> builtins.list[str]:
        if not paths:
            return []
        res = self._run(
            "check-ignore", "--no-index", "-z", "--stdin", input="\0".join(paths), check=False
        )
        return [p for p in res.stdout.split("\0") if p]

    def _protected(self, rel: str) -> bool:
        path = self.workdir / rel
        return ".orchestrator" in Path(rel).parts or path.is_relative_to(self.run_folder)

    def _prune_empty_parents(self, directory: Path) -> None:
        while directory != self.workdir and directory.is_relative_to(self.workdir):
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    def _relative(self, full: str) -> str:
        return full[len(self.prefix) :] if self.prefix and full.startswith(self.prefix) else full

    def _probe(self, *args: str) -> str | None:
        """Run git outside any chosen repository (discovery from the workdir)."""
        res = subprocess.run(
            [self._git, *args],
            cwd=self.workdir,
            env=self._env,
            capture_output=True,
            encoding="utf-8",
            errors="surrogateescape",
            check=False,
        )
        return res.stdout.strip() if res.returncode == 0 else None

    def _probe_ok(self, *args: str) -> bool:
        res = subprocess.run(
            [self._git, *args], cwd=self.workdir, env=self._env, capture_output=True, check=False
        )
        return res.returncode == 0

    def _run(
        self, *args: str, input: str | None = None, check: bool = True, user_index: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """git on the chosen repository; on our temporary index unless `user_index`."""
        env = self._env if user_index else dict(self._env, GIT_INDEX_FILE=str(self._index))
        env = {**env, **process.mark_vars()}  # a killed runner's git dies before locks are cleaned
        return run_git(
            [self._git, "-c", "core.fsmonitor=false", *self._repo, *args],
            env=env,
            cwd=self.workdir,
            input=input,
            check=check,
            what=f"checkpoint failed: git {args[0]}",
        )


def run_git(
    cmd: list[str],
    *,
    env: dict[str, str],
    cwd: Path | None,
    input: str | None,
    check: bool,
    what: str,
) -> subprocess.CompletedProcess[str]:
    """One git command, its output as text (undecodable bytes kept); with `check`, a failure is
    a CheckpointError of one line: `what` (e.g. "checkpoint failed: git add"), then git's first
    line."""
    res = subprocess.run(
        cmd,
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        encoding="utf-8",
        errors="surrogateescape",
        check=False,
    )
    if check and res.returncode != 0:
        detail = (res.stderr.strip() or res.stdout.strip()).splitlines()
        first = detail[0] if detail else f"exit status {res.returncode}"
        raise CheckpointError(f"{what}: {first}")
    return res
