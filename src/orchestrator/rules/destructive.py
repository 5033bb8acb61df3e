"""Whether one shell command destroys data that cannot come back (seed 004: extreme destructive).

The single source of these rules: `orchestrator.policy` holds an agent's shell tool call with it
before the call runs, and `orchestrator.interpret` asks it about every command an agent writes in
its text. Routine clean-ups (`rm -rf node_modules`, `build/`, `git push --force-with-lease` to a
feature branch) pass.

What the caller knows changes only what can be resolved, never which rules apply:

- with a `workdir`, `rm`/`find` paths are resolved (following `cd`): anything outside the
  workdir, the workdir itself or a data-looking folder inside it is held; without one, the path
  text is judged (`/`, `~`, `.`, absolute paths, `..`, data-looking names; scratch space passes);
- with a `branch` (or a `workdir` to ask git), a bare `git push --force` is held only when the
  checked-out branch is shared; without either it is held unless it is `--force-with-lease`.

Shell syntax is read by `orchestrator.rules.shell`; `bash -c '...'` and `eval` are judged like
the command itself.

>>> extreme_destructive("cd api && npx prisma migrate reset --force").command
'npx prisma migrate reset --force'
>>> extreme_destructive("rm -rf node_modules dist") is None
True
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import posixpath
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from orchestrator.artifacts import home_dir, sqlite_file
from orchestrator.rules.shell import (
    current_branch,
    git_args_cwd,
    git_subcommand,
    inner_script,
    rm_targets,
    rough_segments,
    split_commands,
    strip_wrappers,
)

__all__ = [
    "COMMAND_RULES",
    "PROTECTED_BRANCHES",
    "RULES",
    "STATEMENT_RULES",
    "Destructive",
    "destructive_statement",
    "extreme_destructive",
]

PROTECTED_BRANCHES: tuple[str, ...] = (
    "main",
    "master",
    "develop",
    "development",
    "dev",
    "trunk",
    "production",
    "prod",
    "staging",
    "release",
    "live",
    "stable",
    "release/*",
    "release-*",
    "hotfix/*",
)
"""Branches a force push or a deletion must not hit (shell globs, compared case-insensitively)."""


@dataclass(frozen=True)
class Destructive:
    """Why a command is extreme destructive: the rule, a reason a human can read, and the part
    of the command line (one simple command, or a statement) that does it."""

    rule: str
    reason: str
    command: str


RULES: dict[str, str] = {
    "sql-drop": "drops a database object",
    "sql-truncate": "empties a table",
    "sql-delete-all": "deletes every row of a table (no WHERE)",
    "db-reset": "resets or drops a database",
    "infra-destroy": "destroys infrastructure or remote data",
    "disk": "overwrites a disk, destroys files beyond recovery or exhausts the machine",
    "rm-recursive": "rm -r on /, ~, a variable path, the workdir itself, outside it, or on data",
    "find-delete-outside-workdir": "find -delete / -exec rm on the same paths as rm-recursive",
    "git-force-push-shared": "force push, mirror push or deletion of a shared branch",
    "orchestrator-state": "deletes the orchestrator's store or a run's files (the home directory, "
    ".orchestrator/, state.db), or git clean -x where they are",
}
"""Every built-in rule with what it catches (`orchestrator config show` lists these)."""

# -- statements: SQL and friends, in a command's arguments or in free text -----------------------
_I = re.IGNORECASE
STATEMENT_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "sql-drop",
        re.compile(
            r"\bDROP\s+(?:TABLE|DATABASE|SCHEMA|VIEW|INDEX|USER|ROLE|COLLECTION)\b"
            r"(?:\s+IF\s+EXISTS)?\s*[`\"\w.]*",
            _I,
        ),
    ),
    ("sql-truncate", re.compile(r"\bTRUNCATE\s+TABLE\s+[`\"\w.]+", _I)),
    ("sql-truncate", re.compile(r"\bTRUNCATE\s+[`\"\w.]+(?:\s*,\s*[`\"\w.]+)*\s*(?:CASCADE\s*)?;")),
    ("sql-delete-all", re.compile(r"\bDELETE\s+FROM\s+[`\"\w.]+\s*;", _I)),
    ("db-reset", re.compile(r"\.dropDatabase\(\)|\bdb\.\w+\.drop\(\)|\bdropDatabase\s*\(")),
    ("db-reset", re.compile(r"\bFLUSHALL\b|\bFLUSHDB\b")),
)
"""Statements that destroy data wherever they are written (a shell argument, a SQL file line)."""

# in a command's arguments an argument ends the statement, and a database client makes a bare
# `truncate orders` mean what it says
_ARG_DELETE_ALL = re.compile(r"\bDELETE\s+FROM\s+[`\"\w.]+\s*(?:;|(?=$|[\"']))", _I)
_LOOSE_TRUNCATE = re.compile(r"\bTRUNCATE\s+(?:TABLE\s+)?[`\"\w.]+", _I)
_DB_CLIENT = re.compile(
    r"\b(?:psql|mysql|mariadb|sqlite3|mongosh|mongo|cockroach|clickhouse-client|sqlcmd|duckdb|"
    r"redis-cli)\b"
)
_SQL_FLAGS = ("-c", "-e", "--command", "--execute")  # psql -c, mysql -e, cockroach -e, ...
_SQL_FLAGS_EQ = ("--command=", "--execute=")


def destructive_statement(text: str) -> str | None:
    """The first statement in TEXT that drops or empties a table, schema or database.

    >>> destructive_statement("Then: DROP TABLE IF EXISTS users; and re-run.")
    'DROP TABLE IF EXISTS users'
    """
    found = _statement(text)
    return found[1] if found else None


def _statement(text: str) -> tuple[str, str] | None:
    for rule, rx in STATEMENT_RULES:
        m = rx.search(text)
        if m:
            return rule, m.group(0).strip()
    return None


# -- commands: one regex per tool, searched in a simple command's text ----------------------------
COMMAND_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "db-reset",
        re.compile(
            r"\bprisma\S*\s(?:.*\s)?(?:migrate\s+reset\b|db\s+push\b.*--(?:force-reset|accept-data-loss))"
            r"|\b(?:rails|rake|bundle)\b.*\sdb:(?:drop(?::all)?|reset|purge|schema:load|truncate_all"
            r"|migrate:reset|setup)\b"
            r"|(?:^python[\w.]*|\bmanage\.py|\bdjango-admin)\b.*?\s(?:flush|reset_db|sqlflush)(?=\s|$)"
            r"|(?:^php|\bartisan)\b.*?\s(?:migrate:(?:fresh|reset)|db:wipe)\b"
            r"|^(?:sequelize\S*|npx|typeorm\S*|knex|yarn|pnpm|bunx?)\b.*\b(?:db:drop|schema:drop"
            r"|migrate\s+reset|db\s+push\b.*--force-reset)\b"
            r"|\b(?:supabase\s+db\s+reset|sequelize(?:-cli)?\s+db:drop|typeorm\S*\s+schema:drop)\b"
            r"|\balembic\b(?=.*\sdowngrade(?:\s|$))(?=.*\sbase(?:\s|$))"
            r"|\bknex\b.*\bmigrate:rollback\b.*--all|\bdoctrine:(?:database:drop|schema:drop)\b"
            r"|^(?:dropdb|dropuser)\b|\b(?:dropdb|dropuser)\s|\bmysqladmin\b.*\sdrop\b"
            r"|\bredis-cli\b.*\bflush(?:all|db)\b|\bflushall\b",
            _I,
        ),
    ),
    (
        "infra-destroy",
        re.compile(
            r"\b(?:terraform|tofu|pulumi)\b.*\s-{0,2}destroy\b"
            r"|\bkubectl\b(?=.*\sdelete(?:\s|$))(?=.*\s(?:(?:namespaces?|ns|pvc?|persistentvolumes?"
            r"|persistentvolumeclaims?|all|--all|--all-namespaces|-A|statefulsets?|sts)(?:\s|$)"
            r"|(?:namespaces?|ns)/))"
            r"|\bhelm\b.*\s(?:uninstall|delete)(?:\s|$)"
            r"|\b(?:docker|podman)(?:-compose)?\b.*(?:\svolume\s+(?:rm|prune)\b"
            r"|\ssystem\s+prune\b.*--volumes|\sdown\b.*(?:\s-v\b|--volumes))"
            r"|\baws\s+s3\s+(?:rm|rb)\b.*--(?:recursive|force)"
            r"|\bgsutil\b(?=.*\srm(?:\s|$))(?=.*\s-[a-z]*r[a-z]*(?:\s|$))",
            _I,
        ),
    ),
    (
        "disk",
        re.compile(
            r"^(?:mkfs(?:\.\w+)?|wipefs|shred)\b|\bmkfs(?:\.\w+)?\s|\bdd\b.*\bof=/dev/"
            r"|>\s*/dev/(?:sd[a-z]|nvme|hd[a-z]|disk|mmcblk)"
        ),
    ),
)
_FORK_BOMB = re.compile(r":\s*\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:")

READ_ONLY = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "less", "more", "head", "tail", "wc"}
)
_GIT_READ_ONLY = frozenset({"grep", "log", "show", "diff"})


# -- paths for rm and find ------------------------------------------------------------------------
SAFE_NAMES = frozenset(
    {
        "node_modules", "build", "builds", "dist", "out", "target", ".cache", "cache",
        "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", ".nox", ".venv",
        "venv", ".env.d", "coverage", ".coverage", "htmlcov", ".next", ".nuxt", ".turbo",
        ".parcel-cache", ".svelte-kit", ".gradle", ".eggs", "tmp", "temp", ".tmp", ".angular",
        ".expo", "storybook-static", "bin", "obj", ".terraform", ".serverless",
        "package-lock.json", "yarn.lock", "pnpm-lock.yaml", ".yarn-cache", ".npm", ".pnpm-store",
        "site", "_site", "public/build", "lib-cov", ".nyc_output", "*.pyc", "*.pyo", "*.o",
        "*.log", "*.egg-info", "*.tsbuildinfo", "*.class", "logs", ".DS_Store", "test-results",
        "playwright-report", ".vite", "vendor/bundle", "deps", "_build", ".dart_tool",
        ".stack-work", "dist-newstyle", "cmake-build-debug", "cmake-build-release", ".idea",
        "tmp/cache",
    }
)  # fmt: skip
"""Build output, caches and dependencies: deleting them is routine, they come back."""
SAFE_SUFFIXES = (
    ".egg-info", ".pyc", ".pyo", ".o", ".log", ".tsbuildinfo", ".class", ".tmp", ".orig",
    ".rej", ".bak", ".swp",
)  # fmt: skip
DATA_WORDS = re.compile(
    r"(^|[/_.-])(data|db|dbs|database|databases|uploads?|media|storage|backups?|prod|production|"
    r"pgdata|postgres(ql)?|mysql|mongo(db)?|redis|volumes?|secrets?|\.git|var|srv|home|users|etc|"
    r"usr|opt|mnt|documents|desktop|photos|state)($|[/_.-])",
    re.I,
)
"""Path parts that look like data, not build output (`data/`, `uploads`, `.git`, `pgdata`)."""
WORKDIR_DATA_WORDS = re.compile(
    r"(^|[/_.-])(data|databases?|uploads?|storage|backups?|pgdata|volumes?|\.git)($|[/_.-])", re.I
)
"""Inside the working directory (whose tracked files the run's checkpoints can restore), only
names that clearly hold data are held: `src/users/` or `lib/state/` are code folders there."""
_ROOTISH = frozenset(
    {
        "/", "/*", "~", "~/", "~/*", "$HOME", "${HOME}", "$HOME/", "${HOME}/", "$HOME/*", "*",
        ".", "./", "./*", "..", "../", "../*", ".*", "/.", "~/.", "/home", "/home/*", "/root",
        "/etc", "/usr", "/var", "/boot", "/opt", "/srv", "/mnt",
    }
)  # fmt: skip
# scratch space: routine to delete when no workdir says otherwise (matched, never used as paths)
_SCRATCH = ("/tmp/", "/var/tmp/", "$TMPDIR", "${TMPDIR", "$(mktemp", "/private/tmp/", "/dev/shm/")  # noqa: S108
_PWD = re.compile(r"^\$\{?PWD\}?(?=/|$)")
_HOME = re.compile(r"^(?:~|\$\{?HOME\b)")  # ~, ~/x, ~user, $HOME, ${HOME}/x


def _safe_name(path: str) -> bool:
    path = path.rstrip("/")
    if path.endswith("/*"):
        path = path[:-2]
    base = path.rsplit("/", 1)[-1]
    return base in SAFE_NAMES or path in SAFE_NAMES or base.endswith(SAFE_SUFFIXES)


def _data_reason(what: str, path: str, words: re.Pattern[str] = DATA_WORDS) -> str | None:
    if _safe_name(path) or not words.search(path.rstrip("/").removesuffix("/*")):
        return None
    return f"{what} {path}, which looks like data rather than build output"


def _path_reason_text(target: str, what: str = "deletes") -> str | None:
    """Why deleting TARGET is extreme when only its text is known (no workdir)."""
    t = target.strip().strip("'\"")
    if not t:
        return None
    if t in _ROOTISH or re.fullmatch(r"/+\*?", t):
        return f"{what} {t}: the filesystem root, the home folder or a whole directory"
    if t.startswith(_SCRATCH):
        return None
    if _safe_name(t):
        return None
    if _HOME.match(t):
        return f"{what} under the home folder ({t})"
    if t.startswith("/"):
        return f"{what} {t}, an absolute path outside scratch space"
    if "$" in t or "`" in t:
        return f"{what} a path built from a variable ({t}); it may expand to anything"
    if t == ".." or t.startswith("../"):
        return f"{what} {t}, outside the current directory"
    return _data_reason(what, t)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _path_reason_workdir(
    target: str, cwd: Path, workdir: Path, what: str = "deletes", whole_ok: bool = False
) -> str | None:
    """Why deleting TARGET (resolved from CWD) is extreme, knowing the working directory."""
    if _HOME.match(target):
        return f"{what} under the home folder ({target})"
    if "$" in _PWD.sub("", target) or "`" in target:
        return f"{what} a path built from a variable ({target}); it may expand to anything"
    expanded = _PWD.sub(str(cwd), target)
    resolved = Path(os.path.normpath(cwd / expanded))
    if resolved.name in ("*", ".*"):
        resolved, what = resolved.parent, f"{what} everything in"
    if resolved in (Path("/"), Path.home()):
        return f"{what} {resolved}"
    if resolved == workdir:
        if whole_ok:
            return None
        return f"{what} the working directory" + (" itself" if what == "deletes" else "")
    if not _inside(resolved, workdir):
        return f"{what} {resolved}, outside the working directory {workdir}"
    rel = resolved.relative_to(workdir).as_posix()
    return _data_reason(what, rel + ("/*" if "everything" in what else ""), WORKDIR_DATA_WORDS)


# -- the verdict ----------------------------------------------------------------------------------
def extreme_destructive(
    command: str,
    workdir: Path | str | None = None,
    *,
    branch: str | None = None,
    protected_branches: Iterable[str] = PROTECTED_BRANCHES,
) -> Destructive | None:
    """Why running the shell COMMAND would destroy data that cannot come back, or None.

    WORKDIR (where the command runs) lets `rm`/`find` paths be resolved; BRANCH is the checked-out
    branch for a bare `git push --force` (looked up with git in the workdir when not given).

    >>> extreme_destructive("git push --force origin main").rule
    'git-force-push-shared'
    >>> extreme_destructive("rm -rf build/", "/srv/app") is None
    True
    >>> extreme_destructive("rm -rf /tmp/out", "/srv/app").reason
    'deletes /tmp/out, outside the working directory /srv/app'
    """
    if _FORK_BOMB.search(command):
        return Destructive("disk", "a fork bomb: exhausts the machine", command.strip())
    wd = Path(os.path.normpath(Path(workdir).resolve())) if workdir is not None else None
    judge = _Judge(wd, branch, tuple(p.lower() for p in protected_branches), command)
    return judge.command(command, wd if wd is not None else Path("."))


@dataclass
class _Judge:
    workdir: Path | None
    branch: str | None
    protected: tuple[str, ...]
    whole: str

    def command(self, command: str, cwd: Path, depth: int = 0) -> Destructive | None:
        segments = split_commands(command)
        if segments is None:  # unreadable shell (odd quoting): judge its words and statements
            segments = rough_segments(command)
            found = self.statement(command, [command] if _DB_CLIENT.search(command) else [])
            if found:
                return found
        for raw in segments:
            argv = strip_wrappers(raw)
            if not argv:
                continue
            prog = os.path.basename(argv[0])
            if depth < 5 and (inner := inner_script(prog, argv)) is not None:
                found = self.command(inner, cwd, depth + 1)
                if found:
                    return Destructive(found.rule, found.reason, " ".join(raw))
                continue
            if prog == "cd":
                cwd = self._cd(cwd, argv[1] if len(argv) > 1 else "~")
                continue
            hit = self.simple(prog, argv, cwd)
            if hit:
                return Destructive(hit[0], hit[1], " ".join(raw))
        return None

    def _cd(self, cwd: Path, target: str) -> Path:
        if self.workdir is None:  # keep the path text: `cd /var/lib && rm -rf x` is /var/lib/x
            if _HOME.match(target) or target.startswith("/"):
                return Path(target)
            return Path(posixpath.normpath(posixpath.join(cwd.as_posix(), target)))
        with contextlib.suppress(ValueError):  # `~user` with a NUL byte
            target = os.path.expanduser(target)
        return Path(os.path.normpath(cwd / target))

    def statement(self, text: str, sql: Iterable[str] = ()) -> Destructive | None:
        """A destructive statement in TEXT; SQL: the parts known to be SQL (a bare `truncate x`
        is only believed there)."""
        found = _statement(text)
        if found:
            return Destructive(found[0], RULES[found[0]], found[1])
        m = _ARG_DELETE_ALL.search(text)
        if m:
            return Destructive("sql-delete-all", RULES["sql-delete-all"], m.group(0).strip())
        for part in sql:
            m = _LOOSE_TRUNCATE.search(part)
            if m:
                return Destructive("sql-truncate", RULES["sql-truncate"], m.group(0).strip())
        return None

    def sql_parts(self, argv: list[str], text: str) -> list[str]:
        """What in this simple command is SQL: all of it when a database client is in the command
        line or it starts with TRUNCATE, else the values of `-c`/`-e`/`--command`/`--execute`."""
        if _DB_CLIENT.search(self.whole) or argv[0].upper() == "TRUNCATE":
            return [text]
        values = [argv[k + 1] for k, a in enumerate(argv[:-1]) if a in _SQL_FLAGS]
        return values + [a.partition("=")[2] for a in argv if a.startswith(_SQL_FLAGS_EQ)]

    def simple(self, prog: str, argv: list[str], cwd: Path) -> tuple[str, str] | None:
        """(rule, reason) for one simple command (wrappers already stripped)."""
        if prog in READ_ONLY:
            return None
        git_args = git_subcommand(argv) if prog == "git" else None
        if git_args and git_args[0] in _GIT_READ_ONLY:
            return None
        text = " ".join(
            [prog, *(a if not re.search(r"\s", a) else shlex.quote(a) for a in argv[1:])]
        )
        found = self.statement(text, self.sql_parts(argv, text))
        if found:
            return found.rule, found.reason
        for rule, rx in COMMAND_RULES:
            if rx.search(text):
                return rule, RULES[rule]
        if prog == "rm":
            for target in (a for a in argv[1:] if not a.startswith("-")):
                if reason := _state_reason(target, cwd):
                    return "orchestrator-state", reason
            for target in rm_targets(argv) or []:
                reason = self.path_reason(target, cwd)
                if reason:
                    return "rm-recursive", reason
        if prog == "find" and ("-delete" in argv or ("-exec" in argv and "rm" in argv)):
            starts = [a for a in argv[1:] if not a.startswith(("-", "(", "!"))][:1] or ["."]
            filtered = any(a in _FIND_FILTERS for a in argv)
            reason = self.path_reason(starts[0], cwd, whole_ok=filtered)
            if reason:
                return "find-delete-outside-workdir", reason
        if git_args and git_args[0] == "clean" and self.workdir is not None:
            reason = _clean_reason(git_args[1:], cwd / git_args_cwd(argv))
            if reason:
                return "orchestrator-state", reason
        if git_args and git_args[0] == "push":
            reason = self.push_reason(git_args[1:], cwd / git_args_cwd(argv))
            if reason:
                return "git-force-push-shared", reason
        return None

    def path_reason(self, target: str, cwd: Path, whole_ok: bool = False) -> str | None:
        if self.workdir is not None:
            return _path_reason_workdir(target, cwd, self.workdir, whole_ok=whole_ok)
        # without a workdir `find . -name x -delete` still reads as the whole tree: judged as text
        if str(cwd) != "." and not target.startswith(("/", "~", "$")):
            target = posixpath.normpath(posixpath.join(cwd.as_posix(), target))
        return _path_reason_text(target)

    def push_reason(self, args: list[str], cwd: Path) -> str | None:
        """A force push, mirror push or branch deletion that hits a shared branch."""
        flags = [a for a in args if a.startswith("-")]
        refs = [a for a in args if not a.startswith("-")]
        if "--mirror" in flags:
            return "mirror-pushes: overwrites and deletes every branch of the remote"
        lease = any(a.startswith(("--force-with-lease", "--force-if-includes")) for a in flags)
        hard = any(
            a == "--force" or (not a.startswith("--") and len(a) > 1 and "f" in a) for a in flags
        )
        delete = "-d" in flags or "--delete" in flags
        branches: list[str] = []
        for r in refs[1:]:  # refs[0] is the remote
            hard |= r.startswith("+")
            src, _, dst = r.lstrip("+").partition(":")
            delete |= r.lstrip("+").startswith(":")
            branches.append((dst or src).removeprefix("refs/heads/"))
        if not (hard or lease or delete):
            return None
        current = self.branch
        if (
            current is None
            and self.workdir is not None
            and (not branches or any(b.lower() == "head" for b in branches))
        ):
            current = current_branch(cwd)
        if not branches:
            if current is not None:
                branches = [current]
            elif self.workdir is not None:
                return "force-pushes a branch that could not be determined (no git repository?)"
            elif hard:
                return "force-pushes the checked-out branch, which may be a shared one"
            else:
                return None
        resolved = [current if b.lower() == "head" and current else b for b in branches]
        if any(b.lower() == "head" for b in resolved):
            return "force-pushes HEAD, whose branch could not be determined"
        hit = [b for b in resolved if self._shared(b)]
        if hit:
            verb = "deletes" if delete else "force-pushes"
            return f"{verb} the shared branch {', '.join(hit)}"
        return None

    def _shared(self, branch: str) -> bool:
        return any(fnmatch.fnmatchcase(branch.lower(), p) for p in self.protected)


def _state_reason(target: str, cwd: Path) -> str | None:
    """Why deleting TARGET loses run state: a `.orchestrator` folder, the orchestrator's home
    directory (the store and every run's files) or a folder holding it, the store file
    (`ORCHESTRATOR_DB`, with its -wal/-shm)."""
    t = target.strip().strip("'\"").rstrip("/").removesuffix("/*")
    if not t or "$" in t or "`" in t:
        return None
    if ".orchestrator" in Path(t).parts:
        return f"deletes {target}: the orchestrator's run state"
    with contextlib.suppress(ValueError, RuntimeError):
        t = os.path.expanduser(t)
    resolved = Path(os.path.normpath(cwd.resolve() / t))
    home = home_dir()
    runs = home / "runs"
    if (
        resolved in (home, runs)
        or runs in resolved.parents
        or (resolved.parent == home and resolved.name.startswith("state.db"))
    ):
        return f"deletes {target}: the orchestrator's store and run files ({home})"
    if resolved in home.parents and resolved not in (Path("/"), Path.home()):
        return f"deletes {target}, which holds the orchestrator's store ({home})"
    store = sqlite_file(os.environ.get("ORCHESTRATOR_DB") or "")
    if store is not None and (
        resolved in store.parents
        or (resolved.parent == store.parent and resolved.name.startswith(store.name))
    ):
        return f"deletes {target}: the orchestrator's store ({store})"
    return None


def _clean_reason(args: list[str], cwd: Path) -> str | None:
    """`git clean -x`/`-X` deletes ignored files: an older `.orchestrator/` store, or the home
    directory when it lies inside the repository."""
    if not any(
        a.startswith("-") and not a.startswith("--") and ("x" in a or "X" in a) for a in args
    ):
        return None
    if (cwd / ".orchestrator").exists():
        return "deletes ignored files, among them .orchestrator/ (the orchestrator's run state)"
    with contextlib.suppress(OSError):
        if cwd.resolve() in home_dir().parents:
            return f"deletes ignored files, among them the orchestrator's store ({home_dir()})"
    return None


_FIND_FILTERS = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-type", "-newer", "-mtime",
     "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-empty", "-user", "-group",
     "-perm", "-maxdepth", "-wholename", "-iwholename"}
)  # fmt: skip
"""With one of these `find . ... -delete` picks files, rather than deleting the whole tree."""
