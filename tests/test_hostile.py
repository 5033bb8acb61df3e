"""A hostile new user: every bad input is one line on stderr, exit 2, no traceback, and the store
is exactly as it was (plans, configs, environment, flags, answers, stores, paths).

Every case runs the real entry point (`orchestrator.cli:main`, what the `orchestrator` script
calls) in-process, one after another with its own environment and directory, which keeps 80
cases to seconds; a representative subset also runs as real subprocesses, in parallel.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import EXAMPLES, cli, cli_env

Setup = Callable[[Path], None]


@dataclass
class Case:
    id: str
    args: list[str]
    setup: Setup | None = None
    env: dict[str, str] = field(default_factory=dict)
    expect: str | None = None
    """A piece of the error line (the file named, the line number)."""
    subprocess: bool = False
    """Also run as a real subprocess."""


@dataclass
class Result:
    code: int | None
    stdout: str
    stderr: str


def write(name: str, text: str | bytes) -> Setup:
    def setup(tmp: Path) -> None:
        path = tmp / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")

    return setup


def both(*setups: Setup) -> Setup:
    def setup(tmp: Path) -> None:
        for s in setups:
            s(tmp)

    return setup


def fifo(name: str) -> Setup:
    return lambda tmp: os.mkfifo(tmp / name)


def sparse(name: str, size: int) -> Setup:
    def setup(tmp: Path) -> None:
        with (tmp / name).open("wb") as fh:
            fh.truncate(size)

    return setup


def directory(name: str) -> Setup:
    return lambda tmp: (tmp / name).mkdir()


def replace_store(data: bytes | None) -> Setup:
    """state.db replaced by `data` (None: by a directory)."""

    def setup(tmp: Path) -> None:
        db = tmp / "state.db"
        db.unlink()
        if data is None:
            db.mkdir()
        else:
            db.write_bytes(data)

    return setup


def foreign_store(tmp: Path) -> None:
    (tmp / "state.db").unlink()
    con = sqlite3.connect(tmp / "state.db")
    con.execute("CREATE TABLE invoices (id INTEGER)")
    con.commit()
    con.close()


def answered(tmp: Path) -> None:
    assert cli(tmp, "answer", "1", "--retry").returncode == 0


def decision_file(text: str) -> Setup:
    def setup(tmp: Path) -> None:
        (folder,) = tmp.glob("runs/*/1.1/escalation/level-2")
        (folder / "user-decision.json").write_text(text, encoding="utf-8")

    return setup


TASK = "## Task 1.1: Say hello\n\n**Tests:**\n\n```bash\ntrue\n```\n"
UNCLOSED = "## Task 1.1: A\n\n**Tests:**\n\n```bash\ntrue\n\n## Task 1.2: B\n\nswallowed\n"
CYCLE = "## Task 1: A\n**Depends on:** Task 2\n\n## Task 2: B\n**Depends on:** Task 1\n"
GSD_OPEN = '<tasks>\n<task type="auto">\n<name>A</name>\n'
RUN = "run hello.md --agent replay --no-checkpoints --no-wait"
RESUME = "resume --agent replay --no-checkpoints --no-wait"
CMD = "run hello.md --no-checkpoints --agent command --agent-cmd"
PG = "postgresql://user:hunter2@127.0.0.1:1/nothing"
TOML = "orchestrator.toml"


def C(
    id: str,
    args: str,
    setup: Setup | None = None,
    expect: str | None = None,
    sub: bool = False,
    **env: str,
) -> Case:
    return Case(id, shlex.split(args), setup, env, expect, sub)


def toml(text: str | bytes) -> Setup:
    return write(TOML, text)


# fmt: off
PLANS = [
    C("plan-missing", "run nope.md --agent replay", None, "nope.md"),
    C("plan-directory", "run sub --agent replay", directory("sub"), "sub"),
    C("plan-dev-zero", "plan show /dev/zero", None, "/dev/zero", sub=True),
    C("plan-fifo", "run pipe.md --agent replay", fifo("pipe.md"), "pipe.md"),
    C("plan-huge", "plan show big.md", sparse("big.md", 2**31), "too large"),
    C("plan-binary", "plan show bin.md", write("bin.md", b"\x89PNG\r\n\x1a\n\xff\xfe"), "UTF-8"),
    C("plan-empty", "plan show empty.md", write("empty.md", ""), "no tasks"),
    C("plan-unclosed-fence", "run u.md --agent replay", write("u.md", UNCLOSED), "u.md:5", sub=True),
    C("plan-unclosed-first", "plan show u.md", write("u.md", "```\n## Task 1.1: A\n"), "u.md:1"),
    C("plan-duplicate-ids", "plan show d.md", write("d.md", TASK + TASK), "d.md"),
    C("plan-unknown-dep", "plan show d.md", write("d.md", TASK + "**Depends on:** Task 9.9\n"), "9.9"),
    C("plan-cycle", "plan show c.md", write("c.md", CYCLE), "c.md"),
    C("plan-frontmatter-open", "plan show f.md", write("f.md", "---\ntitle: x\n" + TASK), "f.md:1"),
    C("plan-gsd-unclosed", "plan show g.md", write("g.md", GSD_OPEN), "g.md"),
    C("plan-bad-gate", "run b.md --agent replay --scenario hello.replay.yaml",
      write("b.md", TASK.replace("true", 'echo "oops')), "b.md:1"),
    C("plan-under-a-file", "plan show hello.md/x.md", None, "hello.md/x.md"),
]

CONFIGS = [
    C("toml-invalid", "config show", toml("max_attempts = = 3\n"), TOML),
    C("toml-bool-as-int", RUN, toml("max_attempts = true\n"), "max_attempts", sub=True),
    C("toml-string-as-int", "config show", toml('max_attempts = "3"\n'), "max_attempts"),
    C("toml-zero-attempts", RUN, toml("max_attempts = 0\n"), "max_attempts"),
    C("toml-bool-budget", "config show", toml("max_budget_usd = true\n"), "max_budget_usd"),
    C("toml-unknown-key", "config show", toml("colour = 1\n"), "colour"),
    C("toml-unknown-agent-option", "config show", toml("[claude]\nflavour = 1\n"), "flavour"),
    C("toml-task-option", "config show", toml('[tasks."1.1"]\nflavour = 1\n'), "tasks.1.1"),
    C("toml-gate-quotes", RUN, toml('[gates]\ncommands = ["echo \\"x"]\n'), "gates.commands"),
    C("toml-bad-agent", "config show", toml('agent = "hal"\n'), "hal"),
    C("toml-threshold", "config show", toml("similarity_threshold = 2\n"), "similarity_threshold"),
    C("toml-wait", "config show", toml('wait = "maybe"\n'), "wait"),
    C("toml-gates-value", "config show", toml("gates = 5\n"), "gates"),
    C("toml-not-utf8", "config show", toml(b"agent = '\xff'\n"), TOML),
    C("pyproject-bool", "config show",
      write("pyproject.toml", "[tool.orchestrator]\nmax_attempts = true\n"), "pyproject.toml"),
    C("pyproject-invalid", "config show", write("pyproject.toml", "[tool.orchestrator\n"),
      "pyproject.toml"),
    C("config-missing", "config show --config nope.toml", None, "nope.toml"),
    C("config-directory", "config show --config sub", directory("sub"), "sub"),
    C("config-dev-zero", "config show --config /dev/zero", None, "/dev/zero"),
]

ENVIRONMENT = [
    C("env-attempts-word", "config show", None, "max_attempts", ORCHESTRATOR_MAX_ATTEMPTS="abc"),
    C("env-attempts-bool", RUN, None, "max_attempts", ORCHESTRATOR_MAX_ATTEMPTS="true"),
    C("env-agent", "config show", None, "hal", ORCHESTRATOR_AGENT="hal"),
    C("env-gate-timeout", "config show", None, "gates.timeout", ORCHESTRATOR_GATES__TIMEOUT="-1"),
    C("env-unknown", "config show", None, "colour", ORCHESTRATOR_COLOUR="1"),
    C("env-value-and-table", "config show", None, "gates",
      ORCHESTRATOR_GATES="1", ORCHESTRATOR_GATES__TIMEOUT="5"),
    C("env-db-mysql", "runs", None, "driver", sub=True, ORCHESTRATOR_DB="mysql://u:pw@localhost/x"),
    C("env-db-nonsense", "runs", None, "not a url", ORCHESTRATOR_DB="not a url"),
]

FLAGS = [
    C("flag-attempts-word", RUN + " --max-attempts abc", None, "--max-attempts", sub=True),
    C("flag-attempts-zero", RUN + " --max-attempts 0", None, "max_attempts"),
    C("flag-budget-negative", RUN + " --max-budget-usd -5", None, "max_budget_usd"),
    C("flag-budget-word", RUN + " --max-budget-usd lots", None, "--max-budget-usd"),
    C("flag-agent", "run hello.md --agent hal", None, "hal"),
    C("flag-brain", RUN + " --brain big", None, "brain"),
    C("flag-command-no-cmd", "run hello.md --agent command", None, "--agent-cmd"),
    C("flag-command-missing-program", CMD + " 'no-such-prog {prompt_file}'", None, "no-such-prog",
      sub=True),
    C("flag-command-relative-missing", CMD + " './agent.sh {prompt_file}'", None, "./agent.sh"),
    C("flag-command-quotes", CMD + " '\"open'", None, "quot"),
    C("flag-command-placeholder", CMD + " 'x {nope}'", None, "nope"),
    C("flag-model-for-command", CMD + " true --model m", None, "model"),
    C("flag-workdir-file", RUN + " --workdir hello.md", None, "hello.md", sub=True),
    C("flag-workdir-under-file", RUN + " --workdir hello.md/sub", None, "hello.md"),
    C("flag-scenario-missing", RUN + " --scenario nope.yaml", None, "nope.yaml"),
    C("flag-codex-task-cli-path", "run hello.md --agent codex --no-checkpoints",
      toml('[tasks."1.1"]\ncli_path = "/nowhere/codex"\n'), "/nowhere/codex"),
    C("flag-unknown-command", "launch", None, "launch", sub=True),
    C("flag-unknown-option", "runs --colour", None, "--colour"),
    C("flag-missing-argument", "run", None, "plan"),
    C("flag-resume-unknown-run", "resume no-such-run", None, "no-such-run"),
    C("flag-status-unknown-run", "status no-such-run", None, "no-such-run"),
    C("flag-interpret-missing", "interpret nope.txt", None, "nope.txt"),
    C("flag-interpret-dev-zero", "interpret /dev/zero", None, "/dev/zero"),
    C("flag-interpret-directory", "interpret sub", directory("sub"), "sub"),
]

ANSWERS = [
    C("answer-unknown-id", "answer 999 --retry", None, "999", sub=True),
    C("answer-word-id", "answer one --retry", None, "escalation_id"),
    C("answer-negative-id", "answer -- -1 --retry", None, "-1"),
    C("answer-no-such-option", "answer 1 --option Z", None, "Z"),
    C("answer-two-actions", "answer 1 --retry --skip", None, "exactly one"),
    C("answer-text-and-action", "answer 1 'do this' --abort", None, "exactly one"),
    C("answer-nothing", "answer 1", None, "exactly one"),
    C("answer-blank-text", "answer 1 '   '", None, "1"),
    C("answer-twice", "answer 1 --skip", answered, "already answered"),
    C("answer-bad-decision-file", RESUME, decision_file('{"action": '), "user-decision.json"),
    C("answer-decision-file-action", RESUME, decision_file('{"action": "explode"}'),
      "user-decision.json"),
]

STORES = [
    C("store-garbage-runs", "runs", replace_store(os.urandom(4096)), "state.db", sub=True),
    C("store-garbage-status", "status", replace_store(b"x" * 5000), "state.db"),
    C("store-garbage-resume", "resume", replace_store(b"x" * 5000), "state.db"),
    C("store-garbage-run", RUN, replace_store(b"x" * 5000), "state.db"),
    C("store-damaged-sqlite", "escalations",
      replace_store(b"SQLite format 3\x00" + b"\x07" * 8000), "state.db"),
    C("store-empty-escalations", "escalations", replace_store(b""), "empty", sub=True),
    C("store-empty-answer", "answer 1 --retry", replace_store(b""), "empty"),
    C("store-directory", "runs", replace_store(None), "directory"),
    C("store-foreign", "runs", foreign_store, "other tables"),
    C("store-unwritable", "runs", None, "/proc/nowhere",
      ORCHESTRATOR_DB="sqlite:////proc/nowhere/state.db"),
    C("store-under-a-file", "runs --db sqlite:///hello.md/state.db", None, "hello.md"),
    C("store-bad-url", "runs --db nosuch://x", None, "nosuch"),
    C("store-mysql-flag", "status --db mysql://u:pw@localhost/x", None, "driver"),
    C("store-postgres-refused", f"runs --db {PG}", None, "127.0.0.1"),
]
# fmt: on

CASES = PLANS + CONFIGS + ENVIRONMENT + FLAGS + ANSWERS + STORES


def test_enough_cases() -> None:
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one paused run and its open escalation #1, and the example plans."""
    tmp = tmp_path_factory.mktemp("seed")
    for name in (
        "hello.md",
        "hello.replay.yaml",
        "doomed_to_fail.md",
        "doomed_to_fail.replay.yaml",
    ):
        shutil.copy(EXAMPLES / name, tmp / name)
    proc = cli(
        tmp, "run", "doomed_to_fail.md", "--agent", "replay", "--no-checkpoints", "--no-wait"
    )
    assert proc.returncode == 3, proc.stderr
    return tmp


def case_dir(seeded: Path, root: Path, case: Case) -> Path:
    tmp = root / case.id
    shutil.copytree(seeded, tmp, symlinks=True)
    con = sqlite3.connect(tmp / "state.db")  # the copied run's paths (its files) are the copy's
    con.execute(
        "UPDATE runs SET settings_json = replace(settings_json, ?1, ?2), "
        "workdir = replace(workdir, ?1, ?2), plan_path = replace(plan_path, ?1, ?2)",
        (str(seeded), str(tmp)),
    )
    con.commit()
    con.close()
    if case.setup is not None:
        case.setup(tmp)
    return tmp


def snapshot(tmp: Path) -> Any:
    """Every row of every table of the store (or its bytes), and every other file's bytes."""
    db = tmp / "state.db"
    rows: Any = None
    if db.is_file() and db.read_bytes()[:16] == b"SQLite format 3\x00":
        try:
            con = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)
            names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
            rows = {
                n: sorted(map(repr, con.execute(f'SELECT * FROM "{n}"'))) for n in sorted(names)
            }
            con.close()
        except sqlite3.DatabaseError:
            rows = None
    files = {}
    for path in sorted(tmp.rglob("*")):
        if path.name.startswith("state.db") and (rows is not None or path != db):
            continue  # a readable store is compared row by row (a lock taken and freed is no change)
        if not path.is_file() or path.stat().st_size > 2**20:
            continue
        files[str(path.relative_to(tmp))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return rows, files


def in_process(tmp: Path, args: list[str], env: dict[str, str]) -> Result:
    """`orchestrator.cli:main` with this argv, environment and directory; output captured."""
    from orchestrator import cli as cli_module

    saved_env, saved_cwd, saved_argv = dict(os.environ), Path.cwd(), sys.argv
    out, err = io.StringIO(), io.StringIO()
    code: int | None = None
    os.environ.clear()
    os.environ.update(cli_env(tmp, **env))
    os.chdir(tmp)
    sys.argv = ["orchestrator", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            cli_module.main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # what a user would have seen as a traceback
        err.write(traceback.format_exc())
    finally:
        os.environ.clear()
        os.environ.update(saved_env)
        os.chdir(saved_cwd)
        sys.argv = saved_argv
    return Result(code, out.getvalue(), err.getvalue())


def in_subprocess(tmp: Path, args: list[str], env: dict[str, str]) -> Result:
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        cwd=tmp,
        env=cli_env(tmp, **env),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def check(case: Case, result: Result, before: Any, after: Any) -> None:
    shown = f"{case.id}: exit {result.code}\nstdout: {result.stdout[-2000:]}\nstderr: {result.stderr[-3000:]}"
    assert "Traceback" not in result.stdout + result.stderr, shown
    assert result.code == 2, shown
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, shown
    assert lines[0].startswith("error: "), shown
    if case.expect:
        assert case.expect in lines[0], shown
    changed = sorted(k for k in {**before[1], **after[1]} if before[1].get(k) != after[1].get(k))
    assert before[0] == after[0], f"{case.id}: the store changed"
    assert not changed, f"{case.id}: files changed: {changed}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input_in_process(case: Case, seeded: Path, tmp_path: Path) -> None:
    tmp = case_dir(seeded, tmp_path, case)
    before = snapshot(tmp)
    result = in_process(tmp, case.args, case.env)
    check(case, result, before, snapshot(tmp))


def test_bad_input_as_subprocesses(seeded: Path, tmp_path: Path) -> None:
    """The same promise through the installed entry point, in separate processes."""
    chosen = [c for c in CASES if c.subprocess]
    assert len(chosen) >= 10
    dirs = [case_dir(seeded, tmp_path, c) for c in chosen]
    befores = [snapshot(d) for d in dirs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(lambda cd: in_subprocess(cd[1], cd[0].args, cd[0].env), zip(chosen, dirs))
        )
    for case, tmp, before, result in zip(chosen, dirs, befores, results):
        check(case, result, before, snapshot(tmp))


def commands() -> list[list[str]]:
    """Every command the CLI defines, as the words that name it (`plan show`)."""
    import typer.main

    from orchestrator.cli import app

    group = typer.main.get_command(app)
    found: list[list[str]] = []

    def walk(cmd: Any, path: list[str]) -> None:
        subs = getattr(cmd, "commands", None)
        if not subs:
            found.append(path)
            return
        for name, sub in subs.items():
            walk(sub, [*path, name])

    walk(group, [])
    return found


def test_every_command_refuses_bad_arguments(seeded: Path, tmp_path: Path) -> None:
    """Each command, with an option it does not have and with one argument too many: exit 2,
    one line, no traceback, store unchanged."""
    found = commands()
    names = {" ".join(c) for c in found}
    assert {"run", "resume", "runs", "status", "escalations", "answer", "interpret"} <= names
    assert {"plan show", "config show"} <= names
    for words in found:
        for bad in (["--no-such-option"], ["a", "b", "c", "d"]):
            case = Case(f"{'-'.join(words)}{bad[0]}", [*words, *bad])
            tmp = case_dir(seeded, tmp_path, case)
            before = snapshot(tmp)
            check(case, in_process(tmp, case.args, {}), before, snapshot(tmp))


def test_bad_decision_file_leaves_the_run_paused(seeded: Path, tmp_path: Path) -> None:
    """The run is not left RUNNING, its lock is free, and a fixed file is then taken."""
    case = C("decision", RESUME, decision_file("[1, 2"))
    tmp = case_dir(seeded, tmp_path, case)
    result = in_subprocess(tmp, case.args, {})
    assert result.code == 2 and "user-decision.json:1" in result.stderr, result.stderr
    con = sqlite3.connect(tmp / "state.db")
    status, owner = con.execute("SELECT status, lock_owner FROM runs").fetchone()
    con.close()
    assert (status, owner) == ("PAUSED", None)
    decision_file('{"action": "abort"}')(tmp)
    again = in_subprocess(tmp, case.args, {})
    assert again.code == 1, again.stderr
