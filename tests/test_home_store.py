"""One home store outside every workdir: found from any directory, chosen the same way by every
command, out of reach of what an agent does in its workdir."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.helpers import EXAMPLES, cli_env

from orchestrator.policy import CommandPolicy

AMBIGUOUS = str(EXAMPLES / "ambiguous_task.md")


def run_in(cwd: Path, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The CLI started in CWD with HOME as the orchestrator's home and no store chosen."""
    return subprocess.run(
        [sys.executable, "-m", "orchestrator", *args],
        cwd=cwd,
        env=cli_env(home, **({"ORCHESTRATOR_DB": ""} | env)),
        capture_output=True,
        text=True,
        timeout=120,
    )


def dirs(tmp_path: Path, *names: str) -> list[Path]:
    out = [tmp_path / n for n in names]
    for d in out:
        d.mkdir()
    return out


def test_escalations_from_another_directory_is_the_inbox(tmp_path: Path) -> None:
    home, project, elsewhere = dirs(tmp_path, "home", "project", "elsewhere")
    first = run_in(project, home, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "w")
    assert first.returncode == 3, first.stdout + first.stderr
    assert not (project / ".orchestrator").exists()
    inbox = run_in(elsewhere, home, "escalations", "--json")
    assert inbox.returncode == 0, inbox.stderr
    [esc] = json.loads(inbox.stdout)
    run_id = esc["run_id"]
    # the run's files live beside the home store, not in the directory it was started from
    assert (
        home / "runs" / run_id / "1.1" / "escalation" / "level-2" / "hil-request.json"
    ).is_file()
    assert (home / "state.db").is_file()
    ans = run_in(elsewhere, home, "answer", str(esc["id"]), "--option", "B")
    assert ans.returncode == 0, ans.stderr
    done = run_in(elsewhere, home, "resume", run_id)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (project / "w").is_dir()  # the workdir recorded at start, whatever the cwd now
    runs = json.loads(run_in(elsewhere, home, "runs", "--json").stdout)
    assert [(r["id"], r["status"]) for r in runs] == [(run_id, "COMPLETED")]


def test_db_in_orchestrator_toml_is_honoured_by_every_command(tmp_path: Path) -> None:
    home, project, elsewhere = dirs(tmp_path, "home", "project", "elsewhere")
    team = tmp_path / "team" / "team.db"
    (project / "orchestrator.toml").write_text(f'db = "sqlite:///{team}"\n')
    first = run_in(project, home, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "w")
    assert first.returncode == 3, first.stdout + first.stderr
    assert team.is_file() and not (home / "state.db").exists()
    status = run_in(project, home, "status", "--json")
    assert status.returncode == 0, status.stderr
    run_id = json.loads(status.stdout)["run"]["id"]
    [esc] = json.loads(run_in(project, home, "escalations", "--json").stdout)
    assert esc["run_id"] == run_id
    # the home store knows nothing of it; --config names the project's store from anywhere
    assert json.loads(run_in(elsewhere, home, "runs", "--json").stdout) == []
    cfg = str(project / "orchestrator.toml")
    other = run_in(elsewhere, home, "escalations", "--json", "--config", cfg)
    assert [e["id"] for e in json.loads(other.stdout)] == [esc["id"]]
    ans = run_in(project, home, "answer", str(esc["id"]), "--recommended")
    assert ans.returncode == 0, ans.stderr
    done = run_in(project, home, "resume")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (team.parent / "runs" / run_id).is_dir()  # files beside a SQLite store
    final = json.loads(run_in(project, home, "status", "--json").stdout)
    assert final["run"]["status"] == "COMPLETED"


def test_an_older_store_in_the_current_directory_is_still_read(tmp_path: Path) -> None:
    home, project = dirs(tmp_path, "home", "project")
    legacy = project / ".orchestrator" / "state.db"
    old = run_in(
        project, home, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "w",
        ORCHESTRATOR_DB=f"sqlite:///{legacy}",
    )  # fmt: skip
    assert old.returncode == 3, old.stdout + old.stderr
    seen = run_in(project, home, "escalations", "--json")
    assert seen.returncode == 0 and len(json.loads(seen.stdout)) == 1
    [notice] = seen.stderr.strip().splitlines()
    assert "notice:" in notice and f"--db sqlite:///{legacy}" in notice
    assert not (home / "state.db").exists()


SCRIPT = """\
import pathlib, subprocess, sys
task = sys.argv[1]
subprocess.run(["rm", "-rf", ".orchestrator"], check=True)
subprocess.run(["git", "clean", "-fdx", "-q"], check=True)
pathlib.Path(f"t{task}.txt").write_text(task)
print("STATUS: completed")
"""


def test_an_agent_that_wipes_its_workdir_neither_loses_nor_breaks_the_run(
    tmp_path: Path,
) -> None:
    home, work = dirs(tmp_path, "home", "work")
    (tmp_path / "agent.py").write_text(SCRIPT)
    plan = tmp_path / "plan.md"
    plan.write_text(
        "".join(
            f"## Task 1.{n}: Make t1.{n}.txt\n**Tests:**\n```bash\ntest -f t1.{n}.txt\n```\n\n"
            for n in (1, 2, 3)
        )
    )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, check=True)
    (work / ".gitignore").write_text(".orchestrator/\n")
    subprocess.run([*git, "add", "."], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=work, check=True)
    (work / ".orchestrator").mkdir()  # what an older version left behind
    (work / ".orchestrator" / "leftover").write_text("x")
    cmd = f"{sys.executable} {tmp_path / 'agent.py'} {{task_id}}"
    proc = run_in(work, home, "run", str(plan), "--agent", "command", "--agent-cmd", cmd)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    runs = run_in(tmp_path, home, "runs", "--json")
    [run] = json.loads(runs.stdout)
    assert run["status"] == "COMPLETED" and run["completed"] == 3
    assert (home / "runs" / run["id"] / "1.3" / "attempt-1" / "prompt.md").is_file()


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf .orchestrator",
        "rm -f .orchestrator/state.db",
        "rm -rf {home}",
        "rm -rf {home}/runs",
        "rm {home}/state.db-wal",
        "git clean -fdx",
    ],
)
def test_the_policy_holds_commands_that_delete_run_state(tmp_path: Path, command: str) -> None:
    home, work = dirs(tmp_path, "home", "work")
    (work / ".orchestrator").mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ORCHESTRATOR_HOME", str(home))
        hit = CommandPolicy().check("Bash", {"command": command.format(home=home)}, work)
    assert hit is not None and hit.rule == "orchestrator-state", command


def test_routine_clean_ups_still_pass(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    for command in ("git clean -fd", "rm -rf build", "rm -f app/state.json", "git clean -fdx"):
        assert CommandPolicy().check("Bash", {"command": command}, work) is None, command


def test_home_is_not_a_setting(tmp_path: Path) -> None:
    home, project = dirs(tmp_path, "home", "project")
    shown = run_in(project, home, "config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    assert "home" not in json.loads(shown.stdout)["settings"]


def test_a_postgresql_store_keeps_run_files_in_the_home(tmp_path: Path) -> None:
    import uuid

    from sqlalchemy import create_engine, text
    from tests.conftest import PG_URL, _pg_reachable

    if reason := _pg_reachable():
        pytest.skip(reason)
    schema = "t_" + uuid.uuid4().hex[:10]
    admin = create_engine(PG_URL.replace("postgresql://", "postgresql+psycopg://", 1))
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = f"{PG_URL}?options=-csearch_path%3D{schema}"
    try:
        home, project, elsewhere = dirs(tmp_path, "home", "project", "elsewhere")
        first = run_in(
            project, home, "run", AMBIGUOUS, "--agent", "replay", "--workdir", "w",
            ORCHESTRATOR_DB=url,
        )  # fmt: skip
        assert first.returncode == 3, first.stdout + first.stderr
        [esc] = json.loads(run_in(elsewhere, home, "escalations", "--json", "--db", url).stdout)
        assert (home / "runs" / esc["run_id"] / "1.1" / "escalation").is_dir()
        assert not (home / "state.db").exists() and not (project / ".orchestrator").exists()
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
