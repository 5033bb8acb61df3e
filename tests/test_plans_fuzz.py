"""Any input ends in a Plan or a one-line PlanError, never in another exception."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.models import Plan, PlanError
from orchestrator.plans import load_plan, order, parse_plan

DATA = Path(__file__).parent / "data"
SEEDS = [
    (DATA / name).read_text(encoding="utf-8")
    for name in (
        "seed_000_milestone_escalation.md",
        "seed_001_milestone_retry.md",
        "seed_004_gsd_plan.md",
    )
]

FUZZ = settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

ids = st.sampled_from(["1", "1.1", "1.2", "2.1", "3", "4.10", "1.1a", "x"])
words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)

FRAGMENTS = st.one_of(
    st.builds("## Task {}: {}".format, ids, words),
    st.builds("### Task {}: {}".format, ids, words),
    st.builds("**Depends on:** {}".format, st.lists(ids, max_size=3).map(", ".join)),
    st.builds("**Dependencies:** Task {}".format, ids),
    st.builds("**Files:** `{}`, {}".format, words, words),
    st.builds("- [ ] {}".format, words),
    st.builds("<name>Task {}: {}</name>".format, ids, words),
    st.builds('<task type="{}">'.format, st.sampled_from(["auto", "checkpoint:human-verify", ""])),
    st.builds("Run: `{}`".format, words),
    st.builds("**{}:** {}".format, words, words),
    st.sampled_from(
        [
            "---",
            "...",
            "```",
            "```bash",
            "~~~",
            "````markdown",
            "</task>",
            "<task>",
            "<tasks>",
            "</tasks>",
            "<verify>",
            "</verify>",
            "<action>",
            "</action>",
            "<files>",
            "</files>",
            "<done>",
            "</done>",
            "<verification>",
            "</verification>",
            "<!--",
            "-->",
            "<br/>",
            "**Tests:**",
            "**Type:** CODING",
            "# Title",
            "## E2E Test Scenario",
            "## Milestone Verification",
            "cmd \\",
            'echo "unterminated',
            "cat <<EOF",
            "EOF",
            "phase: [1,",
            "a: &x [*x]",
            "when: 2020-13-45",
            "- !!binary aGk=",
            "key: !!python/object:os.system x",
            "\x00",
            "\r",
            "\x0c",
            "\u2028",
            "\ufeff",
            "",
        ]
    ),
    words,
)

structured = st.lists(FRAGMENTS, max_size=30).map("\n".join)


def check(text: str) -> None:
    try:
        plan = parse_plan(text, "fuzz.md")
    except PlanError as err:
        assert "\n" not in str(err) and err.message
        return
    assert_valid(plan)


def assert_valid(plan: Plan) -> None:
    assert plan.tasks
    task_ids = [t.id for t in plan.tasks]
    assert len(set(task_ids)) == len(task_ids)
    known = set(task_ids)
    assert all(d in known for t in plan.tasks for d in t.depends_on)
    ordered = order(plan)
    assert sorted(t.id for t in ordered) == sorted(task_ids)
    position = {t.id: i for i, t in enumerate(ordered)}
    assert all(position[d] < position[t.id] for t in plan.tasks for d in t.depends_on)
    plan.model_dump_json()


@FUZZ
@given(st.text())
def test_arbitrary_text(text: str) -> None:
    check(text)


@FUZZ
@given(structured)
def test_structured_fragments(text: str) -> None:
    check(text)


@FUZZ
@given(
    st.sampled_from(SEEDS),
    st.lists(
        st.tuples(st.floats(0, 1), st.sampled_from(["del", "dup", "ins"]), FRAGMENTS), max_size=6
    ),
)
def test_mutated_seeds(seed: str, edits: list[tuple[float, str, str]]) -> None:
    lines = seed.split("\n")
    for where, op, fragment in edits:
        i = min(int(where * len(lines)), len(lines) - 1)
        if op == "del" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        else:
            lines.insert(i, fragment)
    check("\n".join(lines))


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_from_a_file(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.md"
    path.write_bytes(data)
    try:
        plan = load_plan(path)
    except PlanError as err:
        assert "\n" not in str(err)
        return
    assert_valid(plan)
