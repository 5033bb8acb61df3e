"""Reading a shell line the way bash would, enough to judge each simple command it runs.

`;`, `&&`, `||`, `|`, `&`, parentheses and newlines split commands, `#` comments are dropped, and
wrappers (`sudo`, `env`, `xargs`, `timeout`, ...) are looked through. Used by the destructive-command
rules (`orchestrator.rules.destructive`).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

__all__ = [
    "PUNCT",
    "SHELLS",
    "WRAPPERS",
    "current_branch",
    "git_args_cwd",
    "git_subcommand",
    "inner_script",
    "rm_targets",
    "rough_segments",
    "split_commands",
    "strip_wrappers",
]

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
WRAPPERS: dict[str, frozenset[str]] = {
    # wrapper -> its options that take a value (so the value is not taken for the command)
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-T", "-U"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "xargs": frozenset({"-I", "-n", "-P", "-L", "-s", "-d", "-E", "-a"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "nohup": frozenset(),
    "time": frozenset(),
    "command": frozenset(),
    "exec": frozenset(),
    "stdbuf": frozenset(),
}
PUNCT = ";&|()\n"


def current_branch(cwd: Path) -> str | None:
    """The branch checked out in CWD (None outside a repository or on a detached HEAD)."""
    try:
        out = subprocess.run(
            ["git", "symbolic-ref", "--short", "-q", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, ValueError, subprocess.SubprocessError):  # ValueError: a NUL in the path
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def strip_comments(command: str) -> str:
    """COMMAND without `#` comments (a `#` that starts a word outside quotes, as bash reads it)."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(command):
        c = command[i]
        if quote:
            if c == "\\" and quote == '"' and i + 1 < len(command):
                out.append(command[i : i + 2])
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c == "\\" and i + 1 < len(command):
            out.append(command[i : i + 2])
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or command[i - 1].isspace() or command[i - 1] in PUNCT):
            end = command.find("\n", i)
            if end < 0:
                break
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def split_commands(command: str) -> list[list[str]] | None:
    """The simple commands (argv lists) of a shell line; None when shlex cannot read it."""
    try:
        lex = shlex.shlex(strip_comments(command), posix=True, punctuation_chars=PUNCT)
        lex.whitespace_split = True
        lex.commenters = ""
        tokens = list(lex)
    except ValueError:
        return None
    return split_on_punct(tokens)


def rough_segments(command: str) -> list[list[str]]:
    tokens = re.findall(r"[^\s;&|()]+|[;&|()\n]+", command)
    return split_on_punct([t.strip("'\"") for t in tokens])


def split_on_punct(tokens: list[str]) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for tok in tokens:
        if tok and set(tok) <= set(PUNCT):
            out.append([])
        elif tok:
            out[-1].append(tok)
    return [s for s in out if s]


def strip_wrappers(argv: list[str]) -> list[str]:
    """ARGV without leading `VAR=value`s and wrappers (`sudo -u x`, `env`, `xargs -I{}`, ...)."""
    i = 0
    while i < len(argv):
        word = os.path.basename(argv[i])
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[i]):
            i += 1
        elif word in WRAPPERS:
            takes_value = WRAPPERS[word]
            i += 1
            while i < len(argv) and (argv[i].startswith("-") or "=" in argv[i]):
                i += 2 if argv[i] in takes_value else 1
            if word == "timeout" and i < len(argv):
                i += 1  # the duration
        else:
            break
    return argv[i:]


def inner_script(prog: str, argv: list[str]) -> str | None:
    """The script of `bash -c '...'` / `eval ...`, which is judged like the command itself."""
    if prog == "eval":
        return " ".join(argv[1:])
    if prog in SHELLS:
        for k, a in enumerate(argv[1:-1], start=1):
            if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a):
                return argv[k + 1]
    return None


def git_subcommand(argv: list[str]) -> list[str]:
    """`git`'s subcommand and its arguments, past global options (`git -C dir push ...`)."""
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    return argv[i:]


def git_args_cwd(argv: list[str]) -> str:
    """The directory `git -C DIR` runs in, relative to where git was started."""
    for k, a in enumerate(argv[1:-1], start=1):
        if a == "-C":
            return argv[k + 1]
        if not a.startswith("-"):
            break
    return "."


def rm_targets(argv: list[str]) -> list[str] | None:
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
