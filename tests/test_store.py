"""The store against a real SQLite file and, where one is reachable, a real PostgreSQL."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError

from orchestrator.lock import RunLocked
from orchestrator.models import Plan, Task, TaskStatus, UserError
from orchestrator.store import AlreadyAnswered, Store
from orchestrator.transitions import task_values


def _plan() -> Plan:
    return Plan(
        path="p.md",
        format="milestone",
        tasks=[Task(id="1.1", title="one"), Task(id="1.2", title="two", depends_on=["1.1"])],
    )


def test_run_tasks_and_attempt_roundtrip(store: Store, tmp_path: Path) -> None:
    store.create_run("r1", _plan(), tmp_path, "replay", {"x": 1})
    assert [t["status"] for t in store.tasks("r1")] == ["PENDING", "PENDING"]
    n = store.begin_attempt("r1", "1.1", tmp_path / "1.1", "replay")
    assert n == 1 and store.task("r1", "1.1")["status"] == "RUNNING"
    store.record(
        "r1",
        "1.1",
        attempt=(1, "failed", {"exit_code": 1, "error_summary": "boom"}),
        task_values={"status": "PENDING", "attempts_since_resume": 1},
        event_kind="attempt_finished",
        payload={"action": "retry"},
    )
    assert store.begin_attempt("r1", "1.1", tmp_path / "1.1", "replay") == 2
    att = store.attempts("r1", "1.1")
    assert [a["verdict"] for a in att] == ["failed", None]
    assert att[0]["error_summary"] == "boom" and att[0]["duration_s"] is not None
    assert store.plan("r1").tasks[1].depends_on == ["1.1"]


def test_interrupted_attempts_are_recorded_and_tasks_requeued(store: Store, tmp_path: Path) -> None:
    store.create_run("r1", _plan(), tmp_path, "replay", {})
    store.begin_attempt("r1", "1.1", tmp_path, "replay")
    cut = store.recover_interrupted("r1")
    assert [c["number"] for c in cut] == [1]
    assert store.attempts("r1")[0]["verdict"] == "interrupted"
    assert store.task("r1", "1.1")["status"] == "PENDING"
    assert any(e["kind"] == "attempt_interrupted" for e in store.events("r1"))


def test_status_check_constraint_rejects_unknown_states(store: Store, tmp_path: Path) -> None:
    store.create_run("r1", _plan(), tmp_path, "replay", {})
    with pytest.raises(IntegrityError):
        store.update_task("r1", "1.1", status="DONE-ISH")
    assert store.task("r1", "1.1")["status"] == "PENDING"


def test_escalation_pauses_task_answer_once_and_resume_resets_counters(
    store: Store, tmp_path: Path
) -> None:
    store.create_run("r1", _plan(), tmp_path, "replay", {})
    store.update_task("r1", "1.1", attempts_since_resume=5, level=1, level_attempts=2)
    row = store.task("r1", "1.1")
    esc = store.record(
        "r1",
        "1.1",
        event_kind="escalate",
        payload={},
        task_values=task_values("escalate", row),
        escalation={
            "question": "Which cache?",
            "asker": "agent",
            "options": ["Redis", "In-memory"],
            "recommendation": "In-memory",
            "category": "ambiguous_requirements",
            "level": 2,
        },
    )
    assert esc is not None and store.escalation(esc)["asker"] == "agent"  # type: ignore[index]
    assert store.task("r1", "1.1")["status"] == TaskStatus.PAUSED_FOR_INTERVENTION.value
    seed003 = [e["payload"] for e in store.events("r1", "escalation")]
    assert seed003 == [{"task_id": "1.1", "attempt_count": 5, "state": "PAUSED_FOR_INTERVENTION"}]
    row = store.answer_escalation(
        esc, response="B) In-memory", kind="option", responder="ada", channel="cli"
    )
    assert row["status"] == "answered" and row["wait_s"] >= 0 and row["responder"] == "ada"
    with pytest.raises(AlreadyAnswered, match="already answered by ada via cli"):
        store.answer_escalation(esc, response="A", kind="option", responder="bob", channel="cli")
    values = task_values("answer_guidance", store.task("r1", "1.1"), guidance="use in-memory")
    store.record("r1", "1.1", event_kind="task_resumed", payload={}, task_values=values)
    t = store.task("r1", "1.1")
    assert (
        t["status"],
        t["attempts_since_resume"],
        t["level"],
        t["level_attempts"],
        t["guidance"],
    ) == ("PENDING", 0, 0, 0, "use in-memory")


def test_second_runner_refused_dead_owner_taken_over(store: Store, tmp_path: Path) -> None:
    store.create_run("r1", _plan(), tmp_path, "replay", {})
    token = store.acquire_lock("r1")
    with pytest.raises(RunLocked, match="already being driven"):
        store.acquire_lock("r1")
    store.release_lock("r1", token)
    # a lock held by a process that no longer exists
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    from orchestrator.schema import runs

    with store.tx() as conn:
        conn.execute(
            runs.update()
            .where(runs.c.id == "r1")
            .values(
                lock_owner="x",
                lock_pid=int(dead.stdout),
                lock_host=__import__("socket").gethostname(),
            )
        )
    store.acquire_lock("r1")
    assert any(e["kind"] == "stale_lock_taken_over" for e in store.events("r1"))


def test_a_new_run_is_locked_by_the_commit_that_records_it(store: Store, tmp_path: Path) -> None:
    token = store.create_run("r1", _plan(), tmp_path, "replay", {}, locked=True)
    assert token is not None and store.run("r1")["lock_owner"] == token  # type: ignore[index]
    with pytest.raises(RunLocked, match="already being driven"):
        store.acquire_lock("r1")
    store.release_lock("r1", token, "COMPLETED")
    assert store.run("r1")["status"] == "COMPLETED"  # type: ignore[index]
    store.release_lock("r1", store.acquire_lock("r1"))
    assert store.create_run("r2", _plan(), tmp_path, "replay", {}) is None
    assert store.run("r2")["lock_owner"] is None  # type: ignore[index]


def test_a_run_whose_observers_cannot_be_built_is_left_unlocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock `create_run` takes is let go when the runner cannot be built, so the same
    process (an API user, a test) can resume the run at once."""
    from orchestrator import api

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("no console")

    monkeypatch.setattr(api, "build_runner", broken)
    db = f"sqlite:///{tmp_path / 'state.db'}"
    plan = Path(__file__).parent.parent / "examples" / "hello.md"
    with pytest.raises(RuntimeError, match="no console"):
        api.run(plan, agent="replay", db=db, workdir=str(tmp_path / "w"), interactive=False)
    store = Store(db)
    run_id = store.latest_run_id()
    assert run_id is not None and store.run(run_id)["lock_owner"] is None  # type: ignore[index]
    store.release_lock(run_id, store.acquire_lock(run_id))


def test_bad_url_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="--db"):
        Store("nosuchdialect://x")


def test_a_store_of_the_previous_schema_migrates_askers_and_consultant_overrides(
    tmp_path: Path,
) -> None:
    """Migration 0002 on a real SQLite file written by revision 0001: who asked becomes a column,
    the consultant's overrides move from the run's settings onto the task row."""
    from importlib.resources import files

    from alembic import command
    from alembic.config import Config

    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = create_engine(url)
    cfg = Config()
    cfg.set_main_option("script_location", str(files("orchestrator") / "migrations"))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
        settings = '{"state_dir": "x", "task_overrides": {"1.1": {"model": "m2", "hints": ["h"]}}}'
        conn.execute(
            text(
                "INSERT INTO runs (id, plan_path, plan_json, workdir, agent, settings_json, status, "
                "created_at, updated_at) VALUES ('r1', 'p', :plan, 'w', 'replay', :s, 'PAUSED', 0, 0)"
            ),
            {"plan": _plan().model_dump_json(), "s": settings},
        )
        conn.execute(
            text(
                "INSERT INTO tasks (run_id, task_id, seq, title, status, attempts_since_resume, "
                "level, level_attempts, updated_at) VALUES ('r1', '1.1', 0, 'one', "
                "'PAUSED_FOR_INTERVENTION', 3, 1, 0, 0)"
            )
        )
        for detail in ('{"asker": "The orchestrator"}', '{"asker": "The plan"}', "{}"):
            conn.execute(
                text(
                    "INSERT INTO escalations (run_id, task_id, level, question, options_json, "
                    "detail_json, status, created_at) VALUES ('r1', '1.1', 2, 'q', '[]', :d, "
                    "'open', 0)"
                ),
                {"d": detail},
            )
    engine.dispose()
    store = Store(url)
    assert [e["asker"] for e in store.escalations("r1")] == ["orchestrator", "plan", "agent"]
    assert store.task("r1", "1.1")["overrides"] == {"model": "m2", "hints": ["h"]}
    run = store.run("r1")
    assert run is not None and "task_overrides" not in run["settings_json"]


def test_nul_bytes_and_undecodable_text_are_stored_escaped(store: Store, tmp_path: Path) -> None:
    """PostgreSQL refuses NUL in text: before, every resume re-ran (and paid for) the attempt."""
    store.create_run("r1", _plan(), tmp_path, "replay", {})
    store.begin_attempt("r1", "1.1", tmp_path / "1.1", "replay")
    odd = "boom\x00tail \udcff end"
    esc = store.record(
        "r1",
        "1.1",
        attempt=(1, "failed", {"error_summary": odd}),
        task_values={"status": "PAUSED_FOR_INTERVENTION", "guidance": odd},
        event_kind="attempt_finished",
        payload={"error": odd},
        escalation={"question": odd, "asker": "orchestrator", "why": odd},
    )
    assert esc is not None
    [attempt] = store.attempts("r1", "1.1")
    assert attempt["error_summary"] == "boom\\x00tail \\udcff end"
    assert store.task("r1", "1.1")["guidance"] == "boom\\x00tail \\udcff end"
    assert store.escalation(esc)["question"].startswith("boom\\x00")  # type: ignore[index]
    row = store.answer_escalation(esc, response="ok\x00", kind="text", responder="a", channel="cli")
    assert row["response"] == "ok\\x00"


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_commands_started_together_on_a_new_store_all_open_it(tmp_path: Path, kind: str) -> None:
    """Four processes open one new store at once, five times over: every one opens it (before,
    about half the rounds had one fail with 'table runs already exists' or, on PostgreSQL, a
    duplicate type; or one refused the other's new, still empty file as damaged)."""
    from tests.conftest import pg_schema

    for round_ in range(5):
        with (
            pg_schema("race_")
            if kind == "postgres"
            else contextlib.nullcontext(f"sqlite:///{tmp_path / f'{round_}' / 'state.db'}")
        ) as url:
            code = f"from orchestrator.store import Store; Store({url!r}).close()"
            procs = [
                subprocess.Popen([sys.executable, "-c", code], stderr=subprocess.PIPE, text=True)
                for _ in range(4)
            ]
            errors = [p.communicate(timeout=120)[1] for p in procs]
            assert all(p.returncode == 0 for p in procs), "\n".join(e for e in errors if e)
