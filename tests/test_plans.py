"""Plan parsing: the seed plans themselves, both formats, every plan error, and the examples."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.agents.replay import load_scenario
from orchestrator.models import Plan, PlanError, Task
from orchestrator.plans import detect_format, load_plan, order, parse_plan

DATA = Path(__file__).parent / "data"
EXAMPLES = Path(__file__).parent.parent / "examples"
SEED_000 = DATA / "seed_000_milestone_escalation.md"
SEED_001 = DATA / "seed_001_milestone_retry.md"
SEED_004 = DATA / "seed_004_gsd_plan.md"


def line_of(path: Path, text: str) -> int:
    return path.read_text(encoding="utf-8").split("\n").index(text) + 1


def plan_error(text: str | bytes, tmp_path: Path, name: str = "plan.md") -> PlanError:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(PlanError) as info:
        load_plan(path)
    err = info.value
    assert "\n" not in str(err), "plan errors are shown as one line"
    return err


# --- seed 000: milestone markdown with a plan quoted inside a fence -------------------------


def test_seed_000_has_eleven_tasks_and_not_the_quoted_ones() -> None:
    plan = load_plan(SEED_000)
    assert plan.format == "milestone"
    assert [t.id for t in plan.tasks] == [f"4.{i}" for i in range(1, 12)]
    assert plan.title == "Milestone 4: Escalation + Loop Detection"
    assert plan.frontmatter == {
        "design": "docs/architecture/autonomous-coding/DESIGN.md",
        "architecture": "docs/architecture/autonomous-coding/ARCHITECTURE.md",
    }
    assert "Implement caching" not in [t.title for t in plan.tasks]
    t47 = plan.task("4.7")
    assert t47.line == line_of(SEED_000, "### Task 4.7: Create Ambiguous Task Test Plan")
    assert "## Task 1.1: Implement caching" in t47.extra["content"]
    assert t47.extra["content"].startswith("```markdown") and t47.extra["content"].endswith("```")
    assert t47.acceptance_criteria == [
        "Task is genuinely ambiguous",
        "Running it triggers needs_human",
        "Claude provides reasonable options",
    ]


def test_seed_000_task_fields() -> None:
    plan = load_plan(SEED_000)
    t41 = plan.task("4.1")
    assert t41.title == "Create Escalation Handler"
    assert t41.type == "CODING"
    assert t41.files == ["orchestrator/escalation.py"]
    assert t41.source == str(SEED_000)
    assert t41.body.startswith("### Task 4.1: Create Escalation Handler")
    assert not t41.body.rstrip().endswith("---")
    assert t41.extra["description"].startswith('Detect "needs human" in Claude output')
    notes = t41.extra["implementation_notes"]
    assert notes.startswith("```python") and notes.endswith("```")
    assert 'if "STATUS: needs_human" in output:' in notes
    assert len(t41.acceptance_criteria) == 5
    assert t41.acceptance_criteria[0] == "Detects explicit STATUS: needs_human"
    assert plan.task("4.11").files == [
        "orchestrator/tests/test_escalation.py",
        "orchestrator/tests/test_llm_interpreter.py",
    ]
    assert "cli_integration_cli_py" in plan.task("4.10").extra
    assert all(t.verify == [] and t.depends_on == [] for t in plan.tasks)
    assert "## Milestone Verification" not in plan.task("4.11").body


def test_seed_000_milestone_sections_and_verification() -> None:
    plan = load_plan(SEED_000)
    e2e = plan.extra["e2e_test_scenario"]
    assert e2e["title"] == "E2E Test Scenario"
    assert "# Scenario A: Human input needed" in e2e["text"]
    assert e2e["commands"][0] == "uv run orchestrator run orchestrator/test_plans/ambiguous_task.md"
    mv = plan.extra["milestone_verification"]
    assert mv["commands"][0] == "./scripts/sandbox-reset.sh"
    assert plan.verification == e2e["commands"] + mv["commands"]
    assert not any(c.startswith("#") for c in plan.verification)
    assert plan.verification[-1] == (
        "uv run orchestrator run docs/milestones/orchestrator_enhancements_m1.md"
    )
    # The GATE section is kept but its block holds only comments, and it is no verification.
    assert plan.extra["gate_before_starting_m4"]["commands"] == []
    assert "**Branch:**" in plan.extra["preamble"]["text"]


# --- seed 001: the verification task's bash block -------------------------------------------


def test_seed_001_test_steps_become_gate_commands() -> None:
    plan = load_plan(SEED_001)
    assert [t.id for t in plan.tasks] == ["3.1", "3.2", "3.3", "3.4"]
    t34 = plan.task("3.4")
    assert t34.type == "VERIFICATION"
    assert t34.files == []
    assert len(t34.verify) == 3
    assert t34.verify[0] == 'uv run pytest orchestrator/tests/test_haiku_brain.py -v -k "retry"'
    assert t34.verify[2] == "make quality"
    script = t34.verify[1]
    argv = shlex.split(script)
    assert argv[:4] == ["uv", "run", "python", "-c"] and len(argv) == 5
    assert "# Test 2: Same error 3x - should escalate" in argv[4]
    assert argv[4].strip().endswith("print('SUCCESS: All retry decision tests passed')")
    assert t34.acceptance_criteria[0] == "Retry decisions are contextual (not just count-based)"
    assert "test_steps" in t34.extra
    t31 = plan.task("3.1")
    assert t31.extra["tests"].startswith("`orchestrator/tests/test_haiku_brain.py`")
    assert t31.verify == []
    assert "code_to_add" in t31.extra
    assert "orchestrator/task_runner.py" in plan.task("3.3").extra["files_to_check"]
    assert plan.verification == []
    assert "milestone_3_completion_checklist" in plan.extra


# --- seed 004: GSD ---------------------------------------------------------------------------


def test_seed_004_gsd_plan() -> None:
    plan = load_plan(SEED_004)
    assert plan.format == "gsd"
    fm = plan.frontmatter
    assert fm["phase"] == "10-debug-recovery"
    assert fm["wave"] == 3
    assert fm["depends_on"] == ["10-02", "10-04"]
    assert fm["autonomous"] is True
    assert len(fm["must_haves"]["truths"]) == 4
    assert fm["files_modified"][0].endswith("orchestrate.md")
    assert [t.id for t in plan.tasks] == ["1", "2"]
    t1, t2 = plan.tasks
    assert t1.title == "Add escalation detection to recovery-agent.md"
    assert t1.type == "auto" and not t1.checkpoint
    assert t1.line == line_of(SEED_004, '<task type="auto">')
    assert t1.files == ["packages/arios-cli/templates/.claude/agents/recovery-agent.md"]
    assert t1.verify == [
        'grep -n "Escalation Detection" packages/arios-cli/templates/.claude/agents/recovery-agent.md',
        'grep -n "RECOVERY ESCALATE" packages/arios-cli/templates/.claude/agents/recovery-agent.md',
    ]
    assert t1.extra["expect"] == ["Section heading found", "New output format documented"]
    assert t1.acceptance_criteria == [
        "recovery-agent.md has escalation detection patterns and RECOVERY ESCALATE output format"
    ]
    action = t1.extra["action"]
    assert action.startswith('Add a new section "## Escalation Detection"')
    assert "| Category | Detection Patterns | Why Escalate |" in action
    assert action.endswith("```")  # the half-closed fence is kept as written
    assert t1.body.startswith('<task type="auto">') and t1.body.endswith("</task>")
    assert t2.title == "Add escalation handling to orchestrate.md"
    assert "Options: Retry (r), Skip (s), Abort (a)" in t2.extra["action"]
    assert len(t2.verify) == 2
    assert plan.title == "Add clear escalation triggers with user-appropriate messaging"
    assert set(plan.extra) >= {
        "objective",
        "execution_context",
        "context",
        "verification",
        "success_criteria",
        "output",
    }
    assert plan.extra["verification"].startswith("1. recovery-agent.md has ALWAYS-ESCALATE")
    assert plan.verification == []  # numbered prose, no commands


def test_format_is_detected_from_content() -> None:
    assert detect_format(SEED_000.read_text()) == "milestone"
    assert detect_format(SEED_004.read_text()) == "gsd"
    assert detect_format("# nothing here\n") is None
    quoted_gsd = '## Task 1.1: Document\n\n```xml\n<task type="auto">\n</task>\n```\n'
    assert detect_format(quoted_gsd) == "milestone"


# --- milestone variants ----------------------------------------------------------------------

VARIANTS = """\
# Variants

## Task 1.1: Bullet files
**Files:**
- `src/a.py`
- `src/b.py` (new)

**Acceptance Criteria:**
- [x] done already
- [ ] still open,
  continued on the next line

**Verify:**
```bash
# a comment
pytest -q \\
  tests/test_a.py   # trailing comment

python3 -c 'print(1)'
```

```python
not_a_command()
```

**Risk:** low

## Task 1.2: Comma files
**Files:** a.py, b.py
**Depends on:** 1.1
**Dependencies:** None

Free text before the first label.

### Test Steps
```sh
make check
```

## Task 1.3: Plain heading three
**Type:** RESEARCH
**Dependencies:** Task 1.1, Task 1.2 (the API), requires Python 3.11
"""


def test_milestone_variants() -> None:
    plan = parse_plan(VARIANTS, "variants.md")
    t1, t2, t3 = plan.tasks
    assert t1.files == ["src/a.py", "src/b.py"]
    assert t1.acceptance_criteria == ["done already", "still open, continued on the next line"]
    assert t1.verify == ["pytest -q tests/test_a.py", "python3 -c 'print(1)'"]
    assert t1.extra["risk"] == "low"
    assert "not_a_command()" in t1.extra["verify"]
    assert t1.type == "CODING"
    assert t2.files == ["a.py", "b.py"]
    assert t2.depends_on == ["1.1"]
    assert t2.verify == ["make check"]
    assert t2.extra["description"] == "Free text before the first label."
    assert t3.type == "RESEARCH"
    assert t3.depends_on == ["1.1", "1.2"]
    assert [t.id for t in order(plan)] == ["1.1", "1.2", "1.3"]


def test_heredoc_and_console_prompt_are_one_command_each() -> None:
    text = (
        "## Task 2.1: X\n**Tests:**\n```bash\ncat <<EOF\n# not a comment\nEOF\nls\n```\n"
        "```console\n$ echo hi\nhi\n```\n"
    )
    task = parse_plan(text, "h.md").tasks[0]
    assert task.verify == ["cat <<EOF\n# not a comment\nEOF", "ls", "echo hi"]


def test_crlf_and_bom_keep_line_numbers() -> None:
    text = "\ufeff# T\r\n\r\n## Task 1.1: A\r\n**File:** `a.py`\r\n\r\n## Task 1.1: B\r\n"
    with pytest.raises(PlanError) as info:
        parse_plan(text, "crlf.md")
    assert info.value.line == 6


# --- GSD variants ----------------------------------------------------------------------------

GSD_VARIANTS = """\
---
phase: 2
plan: 1
---
<tasks>
<task type="checkpoint:human-verify" gate="blocking">
  <what-built>The login page</what-built>
  <how-to-verify>Open /login and sign in.</how-to-verify>
  <resume-signal>Type "approved"</resume-signal>
</task>
<task type="auto">
  <name>Write the <b>bold</b> parser</name>
  <files>
    - `src/p.py`
    - src/q.py, src/r.py
  </files>
  <action>
Explain `<task>` in the docs:
```xml
<task type="auto">
  <name>Task 9: example</name>
</task>
```
  </action>
  <verify>
    Run: pytest -q tests/test_p.py
    `npm test`
    uv run mypy
    the page renders fine
    Expect: 3 passed
  </verify>
  <done>
  - parser exists
  - tests pass
  </done>
  <notes>keep it small</notes>
</task>
</tasks>
<verification>
Run: `make e2e`
</verification>
"""


def test_gsd_variants() -> None:
    plan = parse_plan(GSD_VARIANTS, "PLAN.md")
    assert plan.format == "gsd"
    assert plan.frontmatter == {"phase": 2, "plan": 1}
    cp, auto = plan.tasks
    assert (cp.id, cp.checkpoint, cp.type) == ("1", True, "checkpoint:human-verify")
    assert cp.title == "Task 1"
    assert cp.extra["what-built"] == "The login page"
    assert cp.extra["resume-signal"] == 'Type "approved"'
    assert cp.extra["attributes"] == {"gate": "blocking"}
    assert auto.id == "2"
    assert auto.title == "Write the <b>bold</b> parser"
    assert auto.files == ["src/p.py", "src/q.py", "src/r.py"]
    assert "<name>Task 9: example</name>" in auto.extra["action"]
    assert auto.verify == ["pytest -q tests/test_p.py", "npm test", "uv run mypy"]
    assert auto.extra["expect"] == ["3 passed"]
    assert auto.extra["verify_notes"] == ["the page renders fine"]
    assert auto.acceptance_criteria == ["parser exists", "tests pass"]
    assert auto.extra["notes"] == "keep it small"
    assert plan.verification == ["make e2e"]
    assert plan.title == "Phase 2, plan 1"


# --- errors, each with the line that needs fixing ---------------------------------------------


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(PlanError, match="file not found"):
        load_plan(tmp_path / "nope.md")
    with pytest.raises(PlanError, match="is a directory"):
        load_plan(tmp_path)


def test_non_utf8_names_the_line(tmp_path: Path) -> None:
    err = plan_error(b"# Plan\n\n## Task 1.1: caf\xe9\n", tmp_path)
    assert err.line == 3
    assert "not valid UTF-8" in err.message and "0xe9" in err.message
    assert str(err).startswith(f"{tmp_path / 'plan.md'}:3: ")


def test_no_tasks(tmp_path: Path) -> None:
    err = plan_error("# Just notes\n\n```\n## Task 1.1: quoted\n```\n", tmp_path)
    assert "no tasks found" in err.message and err.line is None


def test_duplicate_ids_name_the_second(tmp_path: Path) -> None:
    err = plan_error("## Task 1.1: A\n\n## Task 1.2: B\n\n## Task 1.1: C\n", tmp_path)
    assert err.line == 5
    assert "duplicate task id 1.1 (first at line 1)" in err.message


def test_duplicate_gsd_ids(tmp_path: Path) -> None:
    text = "<task>\n<name>Task 1: a</name>\n</task>\n<task>\n<name>Task 1: b</name>\n</task>\n"
    assert plan_error(text, tmp_path).line == 4


def test_unclosed_task(tmp_path: Path) -> None:
    text = '<tasks>\n<task type="auto">\n  <name>A</name>\n</task>\n\n<task type="auto">\n  <name>B</name>\n'
    err = plan_error(text, tmp_path)
    assert err.line == 6 and "add </task>" in err.message
    nested = '<task type="auto">\n<name>A</name>\n<task type="auto">\n<name>B</name>\n</task>\n'
    err = plan_error(nested, tmp_path)
    assert err.line == 1 and "line 3" in err.message


def test_unclosed_known_child(tmp_path: Path) -> None:
    err = plan_error("<task>\n<name>A</name>\n<action>\ndo it\n</task>\n", tmp_path)
    assert err.line == 3 and "</action>" in err.message


def test_invalid_frontmatter(tmp_path: Path) -> None:
    err = plan_error("---\nphase: 1\nplan: [1, 2\nwave: 3\n---\n## Task 1.1: A\n", tmp_path)
    assert "invalid YAML frontmatter" in err.message
    assert err.line in (4, 5)  # where PyYAML notices the unclosed list
    err = plan_error("---\nphase: 1\n  bad: indent\n---\n## Task 1.1: A\n", tmp_path)
    assert err.line == 3
    err = plan_error("---\n- a list\n---\n## Task 1.1: A\n", tmp_path)
    assert "must be a YAML mapping" in err.message and err.line == 2
    err = plan_error("---\nphase: 1\n## Task 1.1: A\n", tmp_path)
    assert "never closed" in err.message and err.line == 1


def test_frontmatter_values_become_json_friendly() -> None:
    plan = parse_plan("---\nwhen: 2024-05-01\n1: one\n---\n## Task 1.1: A\n", "p.md")
    assert plan.frontmatter == {"when": "2024-05-01", "1": "one"}
    plan.model_dump_json()


def test_unknown_dependency_names_the_task(tmp_path: Path) -> None:
    text = "## Task 1.1: A\n\n## Task 1.2: B\n**Depends on:** Task 1.1, Task 9.9\n"
    err = plan_error(text, tmp_path)
    assert err.line == 3
    assert "Task 1.2 depends on unknown task 9.9" in err.message


def test_dependency_cycle_is_named(tmp_path: Path) -> None:
    text = (
        "## Task 1.1: A\n**Depends on:** 1.3\n\n"
        "## Task 1.2: B\n**Depends on:** 1.1\n\n"
        "## Task 1.3: C\n**Depends on:** 1.2\n"
    )
    err = plan_error(text, tmp_path)
    assert "dependency cycle 1.1 -> 1.3 -> 1.2 -> 1.1" in err.message
    assert err.line == 1
    err = plan_error("## Task 1.1: A\n**Depends on:** 1.1\n", tmp_path)
    assert "1.1 -> 1.1" in err.message


def test_order_follows_dependencies_then_file_order() -> None:
    tasks = [
        Task(id="a", title="a", depends_on=["c"]),
        Task(id="b", title="b"),
        Task(id="c", title="c"),
        Task(id="d", title="d", depends_on=["a", "b"]),
        Task(id="e", title="e"),
    ]
    plan = Plan(path="p", format="milestone", tasks=tasks)
    assert [t.id for t in order(plan)] == ["b", "c", "a", "d", "e"]
    cyclic = Plan(
        path="p",
        format="milestone",
        tasks=[
            Task(id="x", title="x", depends_on=["y"]),
            Task(id="y", title="y", depends_on=["x"]),
        ],
    )
    with pytest.raises(PlanError, match="cycle"):
        order(cyclic)


def test_long_dependency_chain_does_not_recurse() -> None:
    n = 3000
    text = "".join(
        f"## Task {i}: t\n" + (f"**Depends on:** {i + 1}\n" if i < n else "")
        for i in range(1, n + 1)
    )
    plan = parse_plan(text, "chain.md")
    assert [t.id for t in order(plan)][:2] == [str(n), str(n - 1)]


# --- examples --------------------------------------------------------------------------------


def run_gates(commands: list[str], workdir: Path) -> list[subprocess.CompletedProcess[str]]:
    """The way the run loop runs gates: an argument list, no shell."""
    return [
        subprocess.run(
            [sys.executable if argv[0] == "python3" else argv[0], *argv[1:]],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=60,
        )
        for argv in (shlex.split(c) for c in commands)
    ]


def apply_writes(scenario_path: Path, task_id: str, attempt: int, workdir: Path) -> str:
    steps = load_scenario(scenario_path).tasks[task_id]
    step = steps[min(attempt, len(steps)) - 1]
    for rel, content in step.writes.items():
        (workdir / rel).parent.mkdir(parents=True, exist_ok=True)
        (workdir / rel).write_text(content, encoding="utf-8")
    return step.output


@pytest.mark.parametrize(
    "plan_file",
    ["hello.md", "ambiguous_task.md", "doomed_to_fail.md", "gsd/PLAN.md"],
)
def test_examples_parse_and_have_a_scenario_for_every_task(plan_file: str) -> None:
    path = EXAMPLES / plan_file
    plan = load_plan(path)
    scenario = load_scenario(path.with_name(path.stem + ".replay.yaml"))
    assert set(scenario.tasks) == {t.id for t in plan.tasks}
    for task in plan.tasks:
        assert task.verify or plan.format == "gsd", f"task {task.id} has no gate"
        for command in task.verify:
            for forbidden in ("|", "&&", ">", ";;"):
                assert forbidden not in command.replace("->", "").replace("'>'", ""), command


def test_example_plans_keep_the_seed_text() -> None:
    seed = SEED_000.read_text(encoding="utf-8")
    for name in ("ambiguous_task.md", "doomed_to_fail.md"):
        ours = (EXAMPLES / name).read_text(encoding="utf-8")
        original = ours.split("\n**Tests:**")[0].rstrip("\n") + "\n"
        assert f"```markdown\n{original}```" in seed


def test_hello_example_retries_task_1_2_once(tmp_path: Path) -> None:
    plan = load_plan(EXAMPLES / "hello.md")
    scenario = EXAMPLES / "hello.replay.yaml"
    assert [t.id for t in order(plan)] == ["1.1", "1.2", "1.3"]
    assert plan.task("1.3").depends_on == ["1.1", "1.2"]
    apply_writes(scenario, "1.1", 1, tmp_path)
    assert all(r.returncode == 0 for r in run_gates(plan.task("1.1").verify, tmp_path))
    apply_writes(scenario, "1.2", 1, tmp_path)
    first = run_gates(plan.task("1.2").verify, tmp_path)
    assert all(r.returncode != 0 for r in first)
    assert "'Hello Ada'" in first[1].stderr
    apply_writes(scenario, "1.2", 2, tmp_path)
    assert all(r.returncode == 0 for r in run_gates(plan.task("1.2").verify, tmp_path))
    apply_writes(scenario, "1.3", 1, tmp_path)
    assert all(r.returncode == 0 for r in run_gates(plan.task("1.3").verify, tmp_path))
    assert not list(tmp_path.rglob("__pycache__")), "gates must not litter the workdir"


def test_doomed_example_fails_every_attempt(tmp_path: Path) -> None:
    plan = load_plan(EXAMPLES / "doomed_to_fail.md")
    task = plan.task("1.1")
    for attempt in (1, 2, 3):
        output = apply_writes(EXAMPLES / "doomed_to_fail.replay.yaml", "1.1", attempt, tmp_path)
        results = run_gates(task.verify, tmp_path)
        assert any(r.returncode != 0 for r in results)
        assert "AssertionError: expected 100 lines, got 50" in results[0].stderr
        assert "AssertionError: expected 100 lines, got 50" in output


def test_ambiguous_example_asks_then_completes(tmp_path: Path) -> None:
    plan = load_plan(EXAMPLES / "ambiguous_task.md")
    task = plan.task("1.1")
    scenario = EXAMPLES / "ambiguous_task.replay.yaml"
    question = apply_writes(scenario, "1.1", 1, tmp_path)
    for part in ("STATUS: needs_human", "A) Redis", "B) In-memory", "C) File-based"):
        assert part in question
    assert "RECOMMENDATION: B for simplicity" in question
    assert not any(tmp_path.iterdir())
    assert any(r.returncode != 0 for r in run_gates(task.verify, tmp_path))
    apply_writes(scenario, "1.1", 2, tmp_path)
    assert all(r.returncode == 0 for r in run_gates(task.verify, tmp_path))


def test_gsd_example_passes_its_checks(tmp_path: Path) -> None:
    plan = load_plan(EXAMPLES / "gsd" / "PLAN.md")
    assert plan.format == "gsd"
    assert [t.id for t in plan.tasks] == ["1", "2"]
    assert len(plan.task("1").verify) == 1 and plan.task("2").verify == []
    assert len(plan.verification) == 2
    scenario = EXAMPLES / "gsd" / "PLAN.replay.yaml"
    assert any(r.returncode != 0 for r in run_gates(plan.task("1").verify, tmp_path))
    apply_writes(scenario, "1", 1, tmp_path)
    assert all(r.returncode == 0 for r in run_gates(plan.task("1").verify, tmp_path))
    apply_writes(scenario, "2", 1, tmp_path)
    assert all(r.returncode == 0 for r in run_gates(plan.verification, tmp_path))


# --- GSD checkpoints block what follows; a decision keeps its options ---------------------------
GSD_DECISION = """\
---
phase: 3
plan: 1
---
<tasks>
<task type="auto">
  <name>Task 1: Schema</name>
  <action>Write the schema</action>
</task>
<task type="checkpoint:decision" gate="blocking">
  <decision>Select authentication provider</decision>
  <context>We need user authentication.</context>
  <options>
    <option id="supabase">
      <name>Supabase Auth</name>
      <pros>Built in with the database we use</pros>
      <cons>Less customizable UI</cons>
    </option>
    <option id="clerk"><name>Clerk</name><pros>Best UI</pros><cons>Paid</cons></option>
  </options>
  <recommendation>clerk</recommendation>
  <resume-signal>Select: supabase or clerk</resume-signal>
</task>
<task type="auto">
  <name>Task 3: Login</name>
  <action>Build the login page</action>
</task>
<task type="checkpoint:human-verify">
  <what-built>The login page</what-built>
</task>
<task type="auto">
  <name>Task 5: Logout</name>
  <action>Build logout</action>
</task>
</tasks>
"""


def test_gsd_checkpoints_block_every_later_task() -> None:
    plan = parse_plan(GSD_DECISION, "PLAN.md")
    deps = {t.id: t.depends_on for t in plan.tasks}
    assert deps == {"1": [], "2": [], "3": ["2"], "4": ["2"], "5": ["2", "4"]}
    assert [t.id for t in order(plan)] == ["1", "2", "3", "4", "5"]


def test_gsd_decision_checkpoint_keeps_its_options_and_recommendation() -> None:
    decision = parse_plan(GSD_DECISION, "PLAN.md").tasks[1]
    assert decision.extra["checkpoint_options"] == ["Supabase Auth", "Clerk"]
    assert decision.extra["checkpoint_recommendation"] == "Clerk"
    assert decision.extra["checkpoint_option_details"][0] == {
        "id": "supabase",
        "name": "Supabase Auth",
        "pros": "Built in with the database we use",
        "cons": "Less customizable UI",
    }
    plain = GSD_DECISION.replace(
        GSD_DECISION[GSD_DECISION.index("  <options>") : GSD_DECISION.index("  <resume-signal>")],
        "  <options>\n  Pick one:\n  - A) Postgres (recommended)\n  - B) SQLite\n  </options>\n",
    )
    decision = parse_plan(plain, "PLAN.md").tasks[1]
    assert decision.extra["checkpoint_options"] == ["Postgres", "SQLite"]
    assert decision.extra["checkpoint_recommendation"] == "Postgres"
    verify = parse_plan(GSD_DECISION, "PLAN.md").tasks[3]
    assert "checkpoint_options" not in verify.extra


def test_plan_show_lists_the_checkpoint_dependencies(tmp_path: Path) -> None:
    (tmp_path / "PLAN.md").write_text(GSD_DECISION)
    proc = subprocess.run(
        [sys.executable, "-m", "orchestrator", "plan", "show", "PLAN.md", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    tasks = json.loads(proc.stdout)["tasks"]
    assert tasks[4]["depends_on"] == ["2", "4"]
    assert tasks[1]["extra"]["checkpoint_options"] == ["Supabase Auth", "Clerk"]
    table = subprocess.run(
        [sys.executable, "-m", "orchestrator", "plan", "show", "PLAN.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert "2, 4" in table.stdout, table.stdout
