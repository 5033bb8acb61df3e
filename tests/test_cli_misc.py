"""The smaller commands and the public API's documented examples."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import pytest
from tests.helpers import EXAMPLES, cli

import orchestrator
import orchestrator.api
import orchestrator.plans


@pytest.mark.parametrize("module", [orchestrator, orchestrator.plans])
def test_docstring_examples_run(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0


def test_public_interpret_is_the_function() -> None:
    from orchestrator import interpret

    assert callable(interpret)
    assert interpret("STATUS: needs_human\nQUESTION: Redis or memory?").verdict == "needs_human"


def test_interpret_command_json_and_stdin(tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    out.write_text(
        "I can't tell which is wanted.\nOPTIONS:\nA) Redis\nB) In-memory\nRECOMMENDATION: B\n"
        "STATUS: needs_human\n"
    )
    proc = cli(tmp_path, "interpret", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["verdict"] == "needs_human" and data["options"] == ["Redis", "In-memory"]
    proc = cli(tmp_path, "interpret", "-", input="Done. All tests pass.\n")
    assert proc.returncode == 0 and "completed" in proc.stdout
    missing = cli(tmp_path, "interpret", "nope.txt")
    assert (
        missing.returncode == 2
        and "nope.txt" in missing.stderr
        and "Traceback" not in missing.stderr
    )


def test_plan_show_table_and_json(tmp_path: Path) -> None:
    proc = cli(tmp_path, "plan", "show", str(EXAMPLES / "gsd" / "PLAN.md"))
    assert proc.returncode == 0 and "gsd" in proc.stdout
    data = json.loads(cli(tmp_path, "plan", "show", str(EXAMPLES / "hello.md"), "--json").stdout)
    assert [t["id"] for t in data["tasks"]] == ["1.1", "1.2", "1.3"]
    assert data["tasks"][2]["depends_on"] == ["1.1", "1.2"]


def test_commands_without_runs_give_one_line_errors(tmp_path: Path) -> None:
    for args in (("status",), ("resume",), ("answer", "7", "B")):
        proc = cli(tmp_path, *args)
        assert proc.returncode == 2, args
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert cli(tmp_path, "runs", "--json").stdout.strip() == "[]"
    assert "No open escalations" in cli(tmp_path, "escalations").stdout


def test_unknown_agent_and_missing_scenario_are_usage_errors(tmp_path: Path) -> None:
    proc = cli(tmp_path, "run", str(EXAMPLES / "hello.md"), "--agent", "nosuch")
    assert proc.returncode == 2 and "unknown agent" in proc.stderr
    (tmp_path / "p.md").write_text("## Task 1.1: A\n")
    proc = cli(tmp_path, "run", "p.md", "--agent", "replay")
    assert proc.returncode == 2 and "replay scenario" in proc.stderr
