"""The level-1 consultant (rules and optional LLM) and seed 002's escalation files."""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from orchestrator.consultant import (
    ACCEPTANCE_KEY,
    ConsultantDecision,
    build_hil_request,
    checkpoint_before,
    consult,
    hil_options,
    level_dir,
    read_user_decision,
    write_level1,
    write_level2,
    write_resolution,
    write_user_decision,
)
from orchestrator.models import Task, UserError
from orchestrator.rules.failure import key_error_line as key_line

ASSERTION = "AssertionError: assert 'a,b\\n' == 'a;b\\n'"


def pytest_failure(seconds: str, extra: str = "") -> str:
    return (
        "Gate `pytest -q tests/test_export.py` failed (exit 1):\n"
        "______________________________ test_csv ______________________________\n"
        "    def test_csv():\n"
        ">       assert export([('a', 'b')]) == 'a;b\\n'\n"
        f"E       {ASSERTION}\n"
        "E         - a;b\n"
        "E         + a,b\n"
        f"tests/test_export.py:12: AssertionError\n{extra}"
        f"FAILED tests/test_export.py::test_csv - {ASSERTION}\n"
        f"1 failed in {seconds}s"
    )


def attempts(*errors: str, model: str = "gpt-4o") -> list[dict[str, Any]]:
    return [
        {
            "number": i,
            "error_summary": e,
            "verdict": "failed",
            "model": model,
            "agent": "claude",
            "duration_s": 90.0,
            "cost_usd": 0.25,
            "artifact_dir": f"/runs/r1/1.2/attempt-{i}",
        }
        for i, e in enumerate(errors, 1)
    ]


TASK = Task(
    id="1.2",
    title="CSV export",
    files=["src/export.py"],
    verify=["pytest -q tests/test_export.py"],
)
EARLIER = [
    Task(id="1.0", title="Scaffold", files=["pyproject.toml", "tests/test_models.py"]),
    Task(id="1.1", title="Row model", files=["src/models.py", "src/__init__.py"]),
]

SEED_DECISION_KEYS = {
    "timestamp": None,
    "analysis": {"failure_summary", "root_cause", "attempts_analyzed"},
    "decision": {
        "action",
        "model_switch",
        "plan_revert",
        "additional_hints",
        "spec_updates",
        "additional_skills",
    },
    "expected_outcome": None,
    "confidence": None,
}


def assert_seed_shape(data: dict[str, Any]) -> None:
    assert set(data) == set(SEED_DECISION_KEYS)
    assert set(data["analysis"]) == SEED_DECISION_KEYS["analysis"]
    assert set(data["decision"]) == SEED_DECISION_KEYS["decision"]
    assert set(data["decision"]["plan_revert"]) == {
        "enabled",
        "revert_to_task",
        "current_task",
        "reasoning",
    }
    if data["decision"]["model_switch"] is not None:
        assert list(data["decision"]["model_switch"]) == ["from", "to", "reasoning"]
    assert data["decision"]["action"] == "retry_with_changes"
    assert data["timestamp"].endswith("Z") and len(data["timestamp"]) == 20
    assert 0.0 <= data["confidence"] <= 1.0


def test_the_same_assertion_three_times_is_quoted_and_becomes_a_criterion() -> None:
    runs = attempts(pytest_failure("0.03"), pytest_failure("0.05"), pytest_failure("0.04"))
    d = consult(
        TASK, runs, completed_tasks=["1.0", "1.1"], current_model="gpt-4o", fallback_model=None
    )
    data = d.model_dump(mode="json")
    assert_seed_shape(data)
    assert data["analysis"]["attempts_analyzed"] == 3
    assert "3 of 3 attempts" in data["analysis"]["root_cause"]
    hints = data["decision"]["additional_hints"]
    assert hints[0].startswith(f"The failing check is `{ASSERTION}`")
    assert "Do not edit the tests to make them pass; change the code under test." in hints
    assert any(h.startswith("Read the failing test (tests/test_export.py)") for h in hints)
    criteria = data["decision"]["spec_updates"][ACCEPTANCE_KEY]
    assert "`pytest -q tests/test_export.py` must pass" in criteria
    assert "The assertion `assert 'a,b\\n' == 'a;b\\n'` must hold" in criteria
    assert data["decision"]["model_switch"] is None  # no fallback model configured
    assert data["decision"]["plan_revert"]["enabled"] is False
    assert d.source == "rules"


def test_a_fallback_model_is_switched_to_unless_already_in_use() -> None:
    runs = attempts(pytest_failure("0.1"), pytest_failure("0.2"), pytest_failure("0.3"))
    d = consult(TASK, runs, completed_tasks=[], current_model="gpt-4o", fallback_model="sonnet")
    switch = d.model_dump(mode="json")["decision"]["model_switch"]
    assert switch["from"] == "gpt-4o" and switch["to"] == "sonnet"
    assert "gpt-4o failed 3 times the same way" in switch["reasoning"]
    # by_alias or not, the key is "from" as in the seed.
    assert d.model_dump(by_alias=True)["decision"]["model_switch"]["from"] == "gpt-4o"
    same = consult(TASK, runs, completed_tasks=[], current_model="sonnet", fallback_model="sonnet")
    assert same.decision.model_switch is None


def test_errors_in_an_earlier_tasks_file_revert_the_plan_to_it() -> None:
    frame = (
        'Traceback (most recent call last):\n  File "/work/proj/src/export.py", line 4, in export\n'
        "    return ';'.join(r.fields())\n"
        '  File "/work/proj/src/models.py", line 9, in fields\n'
        "    return self._cells\n"
        "AttributeError: 'Row' object has no attribute '_cells'\n"
    )
    runs = attempts(frame, frame.replace("line 9", "line 11"), frame)
    d = consult(
        TASK,
        runs,
        completed_tasks=["1.0", "1.1"],
        current_model=None,
        fallback_model=None,
        earlier_tasks=EARLIER,
    )
    revert = d.decision.plan_revert
    assert revert.enabled and revert.revert_to_task == "1.1" and revert.current_task == "1.2"
    assert "src/models.py" in revert.reasoning
    assert checkpoint_before("1.1", ["1.0", "1.1"]) == "1.0"
    assert checkpoint_before("1.0", ["1.0", "1.1"]) == "start"
    assert any("AttributeError" in h for h in d.decision.additional_hints)


def test_an_earlier_tasks_test_file_or_an_uncompleted_task_does_not_revert() -> None:
    err = pytest_failure("0.1").replace("tests/test_export.py", "tests/test_models.py")
    runs = attempts(err, err, err)
    d = consult(
        TASK,
        runs,
        completed_tasks=["1.0"],
        current_model=None,
        fallback_model=None,
        earlier_tasks=EARLIER,
    )
    assert not d.decision.plan_revert.enabled  # a broken test of 1.0 is this task's regression
    frame = 'File "src/models.py", line 9\nAttributeError: x\n'
    d2 = consult(
        TASK,
        attempts(frame, frame, frame),
        completed_tasks=["1.0"],  # 1.1 did not complete: nothing to revert to
        current_model=None,
        fallback_model=None,
        earlier_tasks=EARLIER,
    )
    assert not d2.decision.plan_revert.enabled


def test_key_line_prefers_the_assertion_and_the_exception() -> None:
    assert key_line(pytest_failure("0.1")) == ASSERTION
    tb = "Traceback (most recent call last):\n  File 'x.py'\nKeyError: 'id'\n"
    assert key_line(tb) == "KeyError: 'id'"
    assert key_line("src/a.ts(3,1): error TS2345: Argument of type") is not None
    assert key_line("") is None


class ScriptedLLM:
    """A real LLMBackend implementation that plays back fixed answers and records prompts."""

    name = "scripted"

    def __init__(self, answer: str | Exception) -> None:
        self.answer = answer
        self.prompts: list[str] = []

    def complete(self, prompt: str, *, timeout: float = 60) -> str:
        self.prompts.append(prompt)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


LLM_ANSWER = {
    "analysis": {
        "failure_summary": "The export joins with commas",
        "root_cause": "export() uses csv.writer's default delimiter",
    },
    "decision": {
        "model_switch": {"to": "some-other-model", "reasoning": "not allowed"},
        "plan_revert": {"enabled": True, "revert_to_task": "9.9", "reasoning": "unknown task"},
        "additional_hints": ["Pass delimiter=';' to csv.writer"],
        "spec_updates": {ACCEPTANCE_KEY: ["Rows are separated by ';'"]},
        "additional_skills": ["python-csv"],
    },
    "expected_outcome": "Passes with the delimiter set",
    "confidence": 0.9,
}


def test_llm_refines_the_rules_within_their_guardrails() -> None:
    runs = attempts(pytest_failure("0.1"), pytest_failure("0.2"), pytest_failure("0.3"))
    llm = ScriptedLLM("Here you go:\n```json\n" + json.dumps(LLM_ANSWER) + "\n```")
    d = consult(
        TASK,
        runs,
        completed_tasks=["1.1"],
        current_model="gpt-4o",
        fallback_model="sonnet",
        llm=llm,
    )
    assert d.source == "llm:scripted"
    assert "Task 1.2: CSV export" in llm.prompts[0] and ASSERTION in llm.prompts[0]
    assert d.analysis.root_cause == "export() uses csv.writer's default delimiter"
    assert d.decision.additional_hints[0] == "Pass delimiter=';' to csv.writer"
    assert any(ASSERTION in h for h in d.decision.additional_hints)  # the rules' facts stay
    assert "Rows are separated by ';'" in d.decision.spec_updates[ACCEPTANCE_KEY]
    assert "`pytest -q tests/test_export.py` must pass" in d.decision.spec_updates[ACCEPTANCE_KEY]
    assert d.decision.additional_skills == ["python-csv"]
    assert d.decision.model_switch is not None and d.decision.model_switch.to == "sonnet"
    assert not d.decision.plan_revert.enabled  # 9.9 is no completed task
    assert d.confidence == 0.9
    assert_seed_shape(d.model_dump(mode="json"))


@pytest.mark.parametrize("answer", [RuntimeError("HTTP 500"), "I think you should retry.", "[1]"])
def test_a_failing_or_nonsense_llm_leaves_the_rules_decision(answer: str | Exception) -> None:
    runs = attempts(pytest_failure("0.1"), pytest_failure("0.2"), pytest_failure("0.3"))
    rules = consult(TASK, runs, completed_tasks=[], current_model=None, fallback_model=None)
    d = consult(
        TASK,
        runs,
        completed_tasks=[],
        current_model=None,
        fallback_model=None,
        llm=ScriptedLLM(answer),
    )
    assert d.source == "rules (llm failed)"
    assert d.decision == rules.decision and d.analysis == rules.analysis


@pytest.fixture
def chat_server() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An OpenAI chat-completions endpoint on 127.0.0.1 answering with LLM_ANSWER."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            seen.append(body)
            reply = {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "model": body.get("model", "m"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": json.dumps(LLM_ANSWER)},
                        "finish_reason": "stop",
                    }
                ],
            }
            raw = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()


def test_llm_over_http_with_the_openai_backend(
    chat_server: tuple[str, list[dict[str, Any]]],
) -> None:
    try:
        backend_cls = importlib.import_module("orchestrator.llm").OpenAIBackend
    except (ModuleNotFoundError, AttributeError):
        pytest.skip("orchestrator.llm.OpenAIBackend does not exist yet (another engineer's module)")
    url, seen = chat_server
    backend = backend_cls(base_url=url, model="local-model")
    runs = attempts(pytest_failure("0.1"), pytest_failure("0.2"), pytest_failure("0.3"))
    d = consult(
        TASK, runs, completed_tasks=[], current_model=None, fallback_model=None, llm=backend
    )
    assert seen and seen[0]["model"] == "local-model"
    assert d.source.startswith("llm:")
    assert d.analysis.root_cause == "export() uses csv.writer's default delimiter"


def test_level1_files_have_seed_names_and_shape(tmp_path: Path) -> None:
    runs = attempts(pytest_failure("0.1"), pytest_failure("0.2"), pytest_failure("0.3"))
    d = consult(TASK, runs, completed_tasks=[], current_model="gpt-4o", fallback_model="sonnet")
    escalation = tmp_path / "1.2" / "escalation"
    out = write_level1(
        escalation, {"task_id": "1.2", "reason": "failed 3 times"}, d, {"model": "sonnet"}
    )
    assert out == escalation / "level-1"
    assert sorted(p.name for p in out.iterdir()) == [
        "consultant-decision.json",
        "trigger.json",
        "updated-config.yaml",
    ]
    saved = json.loads((out / "consultant-decision.json").read_text())
    assert_seed_shape(saved)
    assert ConsultantDecision.model_validate(saved).decision == d.decision  # round trip
    trigger = json.loads((out / "trigger.json").read_text())
    assert next(iter(trigger)) == "timestamp" and trigger["reason"] == "failed 3 times"
    assert yaml.safe_load((out / "updated-config.yaml").read_text()) == {"model": "sonnet"}
    # The task folder works as well as its escalation folder.
    assert write_level1(tmp_path / "1.3", {}, d, {}) == tmp_path / "1.3" / "escalation" / "level-1"


def test_hil_request_after_the_consultant(tmp_path: Path) -> None:
    before = attempts(pytest_failure("0.1"), pytest_failure("0.2"), pytest_failure("0.3"))
    d = consult(TASK, before, completed_tasks=[], current_model="gpt-4o", fallback_model="sonnet")
    after = attempts(*(pytest_failure(s) for s in ("0.4", "0.5", "0.6")), model="sonnet")
    for i, a in enumerate(after, 4):
        a["number"] = i
        a["artifact_dir"] = str(tmp_path / "1.2" / f"attempt-{i}")
    for a in before:
        a["artifact_dir"] = str(tmp_path / "1.2" / f"attempt-{a['number']}")
    hil = build_hil_request(
        run_id="run-7", task=TASK, attempts=before + after, consultant=d.model_dump(mode="json")
    )
    assert set(hil) == {
        "timestamp",
        "project_id",
        "phase",
        "summary",
        "consultant_analysis",
        "options",
        "question_for_user",
        "attachments",
    }
    assert hil["project_id"] == "run-7" and hil["phase"] == "1.2 CSV export"
    assert hil["summary"] == {
        "total_attempts": 6,
        "level_1_interventions": 1,
        "models_tried": ["gpt-4o", "sonnet"],
        "time_spent_minutes": 9.0,
        "cost_usd": 1.5,
    }
    analysis = hil["consultant_analysis"]
    assert set(analysis) == {"problem", "suspected_cause", "learning"}
    assert "did not change the failure" in analysis["learning"]
    assert [o["id"] for o in hil["options"]] == ["A", "B", "C"]
    assert [o["description"] for o in hil["options"]] == hil_options(d)
    assert hil["options"][0]["consultant_recommendation"] is True
    assert all(
        set(o) <= {"id", "description", "effort", "consultant_recommendation"}
        for o in hil["options"]
    )
    assert "How should we proceed?" in hil["question_for_user"]

    out = write_level2(tmp_path / "1.2" / "escalation", {"task_id": "1.2"}, hil)
    assert sorted(p.name for p in out.iterdir()) == ["hil-request.json", "trigger.json"]
    saved = json.loads((out / "hil-request.json").read_text())
    assert saved["attachments"]["full_logs"] == "./"  # the attempt-N folders sit in the task folder


def test_hil_request_mirrors_the_escalations_options_and_recommendation() -> None:
    esc = {
        "question": "Which auth method should I use?",
        "options": ["JWT tokens", "Session cookies", "OAuth2"],
        "recommendation": "B) Session cookies",
        "why": "I found multiple valid approaches and need you to decide.",
    }
    hil = build_hil_request(run_id="r", task=TASK, attempts=[], escalation=esc)
    assert [(o["id"], o["description"]) for o in hil["options"]] == [
        ("A", "JWT tokens"),
        ("B", "Session cookies"),
        ("C", "OAuth2"),
    ]
    assert [o.get("consultant_recommendation", False) for o in hil["options"]] == [
        False,
        True,
        False,
    ]
    assert hil["question_for_user"] == "Which auth method should I use?"
    assert hil["summary"]["level_1_interventions"] == 0 and hil["summary"]["cost_usd"] is None
    assert hil["why"] == esc["why"]


def test_revert_proposal_becomes_an_option() -> None:
    decision = {"decision": {"plan_revert": {"enabled": True, "revert_to_task": "1.1"}}}
    assert hil_options(decision)[-1].startswith("Revert to before task 1.1")


def test_user_decision_is_written_once_and_read_back(tmp_path: Path) -> None:
    folder = tmp_path / "1.2" / "escalation"
    data = write_user_decision(
        folder, {"chosen_option": "A", "user_comment": "Use ';' as delimiter"}
    )
    path = folder / "level-2" / "user-decision.json"
    saved = json.loads(path.read_text())
    assert list(saved) == ["timestamp", "chosen_option", "user_comment", "additional_input"]
    assert saved["additional_input"] == {
        "spec_override": None,
        "manual_code": None,
        "priority_change": None,
    }
    assert read_user_decision(folder) == data
    # The same answer again (a retry after a crash) is fine; a different one is refused.
    write_user_decision(folder, {"chosen_option": "A", "user_comment": "Use ';' as delimiter"})
    with pytest.raises(UserError, match=r"already answered .* with 'A'"):
        write_user_decision(folder, {"chosen_option": "C", "user_comment": ""})
    assert json.loads(path.read_text())["chosen_option"] == "A"
    # A level folder passed directly (as `orchestrator answer` does) is used as it is.
    assert level_dir(folder / "level-0", 2) == folder / "level-0"


def test_a_hand_written_broken_user_decision_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "escalation" / "level-2" / "user-decision.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"chosen_option": "A",\n')
    with pytest.raises(UserError) as err:
        read_user_decision(tmp_path)
    assert str(err.value).startswith(f"{path}:2: invalid JSON")
    path.write_text("{}")
    with pytest.raises(UserError, match='needs "chosen_option"'):
        read_user_decision(tmp_path / "escalation")
    assert read_user_decision(tmp_path / "other") is None


def test_resolution_file(tmp_path: Path) -> None:
    path = write_resolution(tmp_path, {"action": "retry", "chosen_option": "A"})
    assert path == tmp_path / "escalation" / "level-2" / "resolution.json"
    saved = json.loads(path.read_text())
    assert saved["action"] == "retry" and saved["timestamp"].endswith("Z")
