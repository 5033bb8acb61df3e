"""Which agent commands must wait for a human before they run (seed 004: extreme destructive).

The agent adapters call `CommandPolicy.check` before every shell tool call. A hit is held and
asked as an `extreme_destructive` escalation with the exact command; routine commands
(`rm -rf node_modules`, `rm -rf build/` inside the workdir, `pytest`, `ls`) pass untouched.

Precedence: `allow` patterns (regexes searched in the whole command) win, then extra `deny`
patterns, then the built-in rules below. Shell syntax is read with `shlex`: `;`, `&&`, `||`, `|`
split commands, `cd DIR` moves the directory later `rm` paths are resolved against, and
`bash -c '...'`, `sudo`, `env`, `xargs` wrappers are looked through. Self-contained on purpose:
no other orchestrator module is needed (a text classifier in `orchestrator.interpret` may reuse
`classify_command`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from orchestrator.agents.base import HumanQuestion
from orchestrator.models import ConfigError

PROTECTED_BRANCHES = ("main", "master", "develop", "production", "release", "trunk")
SHELL_TOOLS = ("Bash", "PowerShell")
"""Tools whose `command` input is a shell command; any tool input with a string `command` is too."""

ALLOW_WORDS = frozenset(
    {"allow", "yes", "y", "ok", "approve", "approved", "run it", "go", "proceed"}
)


@dataclass(frozen=True)
class PolicyHit:
    """A command held for a human: what it is, which rule caught it and why."""

    tool: str
    command: str
    rule: str
    reason: str

    def question(self) -> HumanQuestion:
        return HumanQuestion(
            question=f"The agent wants to run: {self.command}",
            options=["Allow", "Deny"],
            recommendation="Deny",
            category="extreme_destructive",
            why=self.reason,
            detail={"command": self.command, "tool": self.tool, "rule": self.rule},
        )


def is_approval(answer: str | None) -> bool:
    """True when a human's answer to a held command means "let it run"."""
    if answer is None:
        return False
    return answer.strip().strip(".!").lower() in ALLOW_WORDS


# -- built-in rules ------------------------------------------------------------------------
_I = re.IGNORECASE
PATTERN_RULES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "sql-drop",
        re.compile(r"\bDROP\s+(TABLE|DATABASE|SCHEMA|VIEW|INDEX|USER|ROLE|COLLECTION)\b", _I),
        "drops a database object",
    ),
    ("sql-truncate", re.compile(r"\bTRUNCATE\s+(TABLE\s+)?[\w\"`.]+", _I), "empties a table"),
    (
        "sql-delete-all",
        re.compile(r"\bDELETE\s+FROM\s+[\w\"`.]+\s*(;|$|[\"'])", _I),
        "deletes every row of a table (no WHERE)",
    ),
    (
        "db-reset",
        re.compile(
            r"\bprisma\s+(migrate\s+reset|db\s+push\b.*--(force-reset|accept-data-loss))"
            r"|\b(rails|rake|bin/rails)\s+db:(drop|reset|purge|schema:load)\b"
            r"|\bmanage\.py\s+(flush|reset_db|sqlflush)\b"
            r"|\bartisan\s+(migrate:(fresh|reset)|db:wipe)\b"
            r"|\b(supabase\s+db\s+reset|sequelize(-cli)?\s+db:drop|typeorm\s+schema:drop)\b"
            r"|\balembic\s+downgrade\s+base\b|\bknex\s+migrate:rollback\b.*--all"
            r"|\bdoctrine:(database:drop|schema:drop)\b|\bdropDatabase\s*\("
            r"|\b(dropdb|dropuser)\s|\bmysqladmin\b.*\bdrop\b|\bredis-cli\b.*\bflush(all|db)\b"
            r"|\bFLUSHALL\b",
            _I,
        ),
        "resets or drops a database",
    ),
    (
        "infra-destroy",
        re.compile(
            r"\bterraform\s+(destroy|apply\b.*-destroy)\b|\bpulumi\s+destroy\b"
            r"|\bkubectl\s+delete\s+(ns|namespaces?)\b|\bkubectl\s+delete\b.*--all\b"
            r"|\baws\s+s3\s+(rm|rb)\b.*--(recursive|force)|\bgsutil\s+(-m\s+)?rm\s+-r",
            _I,
        ),
        "destroys infrastructure or remote data",
    ),
    (
        "disk",
        re.compile(
            r"\bmkfs(\.\w+)?\s|\bdd\b.*\bof=/dev/|>\s*/dev/sd[a-z]|:\(\)\s*\{\s*:\|:&\s*\};:"
        ),
        "overwrites a disk or exhausts the machine",
    ),
)
READ_ONLY = frozenset({"grep", "egrep", "rg", "ag", "ack", "less", "more", "head", "tail", "wc"})
WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nohup", "time", "nice", "ionice", "command", "exec", "xargs"}
)
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
SEPARATORS = frozenset({";", "&&", "||", "|", "&", "\n"})


def _segments(command: str) -> list[list[str]] | None:
    """Split a shell command into simple commands (argv lists); None when shlex cannot read it."""
    try:
        lex = shlex.shlex(command, posix=True, punctuation_chars=";&|")
        lex.whitespace_split = True
        lex.commenters = ""
        tokens = list(lex)
    except ValueError:
        return None
    out: list[list[str]] = [[]]
    for tok in tokens:
        if tok in SEPARATORS or set(tok) <= set(";&|"):
            out.append([])
        else:
            out[-1].append(tok)
    return [s for s in out if s]


def _strip_wrappers(argv: list[str]) -> list[str]:
    i = 0
    while i < len(argv):
        word = os.path.basename(argv[i])
        if word in WRAPPERS:
            i += 1
            while i < len(argv) and (argv[i].startswith("-") or "=" in argv[i]):
                i += 1
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[i]):
            i += 1
        else:
            break
    return argv[i:]


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _rm_targets(argv: list[str]) -> list[str] | None:
    """Paths of a recursive `rm` (None when the command is not one)."""
    recursive, paths, end_of_opts = False, [], False
    for a in argv[1:]:
        if not end_of_opts and a == "--":
            end_of_opts = True
        elif not end_of_opts and a.startswith("--"):
            recursive |= a == "--recursive"
        elif not end_of_opts and a.startswith("-") and len(a) > 1:
            recursive |= "r" in a or "R" in a
        else:
            paths.append(a)
    return paths if recursive else None


def _rm_reason(target: str, cwd: Path, workdir: Path, whole_ok: bool = False) -> str | None:
    """Why deleting `target` (resolved from `cwd`) is extreme; None when it is routine."""
    if target.startswith("~") or re.match(r"^\$\{?HOME\}?(/|$)", target):
        return f"deletes under the home folder ({target})"
    if target.startswith("$") and not re.match(r"^\$\{?PWD\}?(/|$)", target):
        return f"deletes a path built from a variable ({target}); it may expand to anything"
    expanded = target.replace("${PWD}", str(cwd)).replace("$PWD", str(cwd))
    resolved = Path(os.path.normpath(cwd / expanded))
    what = "deletes"
    if resolved.name in ("*", ".*"):
        resolved, what = resolved.parent, "deletes everything in"
    if resolved in (Path("/"), Path.home()):
        return f"{what} {resolved}"
    if resolved == workdir and not whole_ok:
        return (
            f"{what} the working directory itself"
            if what == "deletes"
            else f"{what} the working directory"
        )
    if not _inside(resolved, workdir):
        return f"{what} {resolved}, outside the working directory {workdir}"
    return None


def _git_push_reason(argv: list[str], cwd: Path, protected: Iterable[str]) -> str | None:
    """A force push or branch deletion that targets a shared branch."""
    args = [a for a in argv[2:] if a]
    force = any(
        a in ("-f", "--force", "--force-with-lease", "--mirror")
        or a.startswith("--force-with")
        or (a.startswith("-") and not a.startswith("--") and "f" in a)
        for a in args
    )
    delete = any(a in ("-d", "--delete") for a in args)
    refs = [a for a in args if not a.startswith("-")]
    branches: list[str] = []
    for r in refs[1:]:  # refs[0] is the remote
        plus = r.startswith("+")
        force |= plus
        src, _, dst = r.lstrip("+").partition(":")
        if r.lstrip("+").startswith(":"):
            delete = True
        branches.append((dst or src).removeprefix("refs/heads/"))
    if not (force or delete):
        return None
    shared = set(protected)
    if not branches:
        current = _current_branch(cwd)
        if current is None:
            return "force-pushes a branch that could not be determined (no git repository?)"
        branches = [current]
    hit = [b for b in branches if b in shared]
    if hit:
        verb = "deletes" if delete else "force-pushes"
        return f"{verb} the shared branch {', '.join(hit)}"
    return None


def _current_branch(cwd: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", "symbolic-ref", "--short", "-q", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def classify_command(
    command: str, workdir: Path | str, protected_branches: Iterable[str] = PROTECTED_BRANCHES
) -> tuple[str, str] | None:
    """(rule, reason) when a shell command is extreme destructive, else None."""
    workdir = Path(os.path.normpath(Path(workdir).resolve()))
    protected = tuple(protected_branches)
    segments = _segments(command)
    if segments is None:  # unreadable shell (heredoc, odd quoting): fall back to the text rules
        for name, pattern, why in PATTERN_RULES:
            if pattern.search(command):
                return name, why
        return None
    cwd = workdir
    for raw in segments:
        argv = _strip_wrappers(raw)
        if not argv:
            continue
        prog = os.path.basename(argv[0])
        if prog in SHELLS and "-c" in argv[1:-1]:
            inner = argv[argv.index("-c", 1) + 1]
            found = classify_command(inner, cwd, protected)
            if found:
                return found
            continue
        if prog == "cd":
            target = argv[1] if len(argv) > 1 else str(Path.home())
            cwd = Path(os.path.normpath(cwd / os.path.expanduser(target)))
            continue
        if prog in READ_ONLY or (
            prog == "git" and argv[1:2] in (["grep"], ["log"], ["show"], ["diff"])
        ):
            continue
        text = shlex.join(argv)
        for name, pattern, why in PATTERN_RULES:
            if pattern.search(text):
                return name, why
        if prog in ("rm", "rmdir", "shred", "unlink"):
            targets = _rm_targets(argv) if prog == "rm" else None
            for t in targets or []:
                reason = _rm_reason(t, cwd, workdir)
                if reason:
                    return "rm-recursive", reason
        if prog == "find" and ("-delete" in argv or ("-exec" in argv and "rm" in argv)):
            starts = [a for a in argv[1:] if not a.startswith("-")][:1] or ["."]
            reason = _rm_reason(starts[0], cwd, workdir, whole_ok=True)
            if reason:
                return "find-delete-outside-workdir", reason
        if prog == "git" and len(argv) > 1 and argv[1] == "push":
            reason = _git_push_reason(argv, cwd, protected)
            if reason:
                return "git-force-push-shared", reason
    return None


class CommandPolicy:
    """The configurable check every shell tool call goes through before it runs."""

    def __init__(
        self,
        deny: Iterable[str] = (),
        allow: Iterable[str] = (),
        protected_branches: Iterable[str] = PROTECTED_BRANCHES,
        builtin: bool = True,
        enabled: bool = True,
    ) -> None:
        self.deny = [self._compile(p, "deny") for p in deny]
        self.allow = [self._compile(p, "allow") for p in allow]
        self.protected_branches = tuple(protected_branches)
        self.builtin = builtin
        self.enabled = enabled
        """False: nothing is held at all (neither built-in rules nor deny patterns)."""

    KEYS = ("deny", "hold", "allow", "protected_branches", "builtin", "enabled")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> CommandPolicy:
        """Build from a config section: `{deny|hold: [...], allow: [...], enabled: bool, ...}`."""
        data = dict(data or {})
        unknown = set(data) - set(cls.KEYS)
        if unknown:
            raise ConfigError(
                f"policy: unknown key(s) {', '.join(sorted(unknown))}; use {', '.join(cls.KEYS)}"
            )
        return cls(
            deny=[*data.get("deny", ()), *data.get("hold", ())],
            allow=data.get("allow", ()),
            protected_branches=data.get("protected_branches", PROTECTED_BRANCHES),
            builtin=bool(data.get("builtin", True)),
            enabled=bool(data.get("enabled", True)),
        )

    @classmethod
    def from_config(cls, config: Any) -> CommandPolicy:
        """Build from the `[policy]` settings model (attributes) or a plain mapping."""
        if config is None or isinstance(config, Mapping):
            return cls.from_mapping(config)
        dump = getattr(config, "model_dump", None)
        if callable(dump):
            return cls.from_mapping(dump(exclude_none=True))
        return cls.from_mapping({k: getattr(config, k) for k in cls.KEYS if hasattr(config, k)})

    @staticmethod
    def _compile(pattern: str, kind: str) -> re.Pattern[str]:
        try:
            return re.compile(pattern)
        except re.error as e:
            raise ConfigError(f"policy {kind} pattern {pattern!r} is not a valid regex: {e}") from e

    def check(
        self, tool_name: str, tool_input: Mapping[str, Any], workdir: Path | str
    ) -> PolicyHit | None:
        """A `PolicyHit` when this tool call must wait for a human, else None."""
        command = tool_input.get("command")
        if not self.enabled or not isinstance(command, str) or not command.strip():
            return None
        if any(p.search(command) for p in self.allow):
            return None
        for p in self.deny:
            if p.search(command):
                return PolicyHit(
                    tool_name, command, "deny-pattern", f"matches the deny pattern {p.pattern!r}"
                )
        if not self.builtin:
            return None
        found = classify_command(command, workdir, self.protected_branches)
        if found is None:
            return None
        return PolicyHit(tool_name, command, found[0], found[1])

    def describe(self) -> dict[str, Any]:
        """What `orchestrator config show` prints for the policy."""
        rules = [f"{name}: {why}" for name, _, why in PATTERN_RULES] + [
            "rm-recursive: rm -r on /, ~, a variable path, the workdir itself or outside it",
            "find-delete-outside-workdir: find -delete / -exec rm outside the working directory",
            "git-force-push-shared: force push or delete of " + ", ".join(self.protected_branches),
        ]
        return {
            "enabled": self.enabled,
            "checked_tools": [*SHELL_TOOLS, "any tool with a 'command' input"],
            "builtin_rules": rules if self.builtin else [],
            "deny": [p.pattern for p in self.deny],
            "allow": [p.pattern for p in self.allow],
            "protected_branches": list(self.protected_branches),
            "held_as": "extreme_destructive escalation (options: Allow, Deny)",
        }
