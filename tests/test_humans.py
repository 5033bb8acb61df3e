"""Answering a person's panel: action panels take r/s/a/d, letters stay for real options, `skip`
never becomes guidance, and "Why I'm asking" is always a sentence."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from tests.helpers import EXAMPLES, cli, terminal

from orchestrator.humans import (
    answer_from_flags,
    choices,
    panel_actions,
    parse_answer,
)
from orchestrator.interpret.model import why_sentence
from orchestrator.models import UserError
from orchestrator.policy import PolicyHit

RSA = ["Retry with guidance (type it as your answer)", "Skip this task", "Abort the run"]
CHECKPOINT = ["Done - continue", "Skip this task", "Abort the run"]
DECISION = ["Postgres", "SQLite", "Skip this task", "Abort the run"]


def esc(options: list[str], actions: list[str] | None, recommendation: str | None = None) -> Any:
    return {
        "id": 7,
        "options": options,
        "recommendation": recommendation,
        "detail": {"actions": actions} if actions else {},
        "question": "How should I proceed?",
    }


def parse(raw: str, e: Any) -> tuple[str, str]:
    ans = parse_answer(
        raw, e["options"], e["recommendation"], panel_actions(e["options"], e["detail"])
    )
    return ans.kind, ans.text


def test_retry_skip_abort_panel_takes_seed_004_keys_not_letters() -> None:
    e = esc(RSA, ["retry", "skip", "abort"])
    assert [c.key for c in choices(e["options"], panel_actions(e["options"], e["detail"]))] == [
        "r",
        "s",
        "a",
    ]
    assert parse("a", e) == ("abort", "abort")  # was option A: "Retry with guidance"
    assert parse("A", e) == ("abort", "abort")
    assert parse("r", e) == ("retry", "retry")
    assert parse("s", e) == ("skip", "skip task")
    assert parse("skip", e) == ("skip", "skip task")
    assert parse("Retry", e) == ("retry", "retry")
    assert parse("Abort the run", e) == ("abort", "abort")
    assert parse("use the other parser", e) == ("text", "use the other parser")
    with pytest.raises(UserError, match=r"'b' is not one of the choices \(r, s, a\)"):
        parse("b", e)


def test_checkpoint_panels_take_d_and_a_decision_keeps_its_letters() -> None:
    plain = esc(CHECKPOINT, ["done", "skip", "abort"])
    assert parse("d", plain) == ("done", "done") and parse("done", plain) == ("done", "done")
    decision = esc(DECISION, ["done", "done", "skip", "abort"], recommendation="SQLite")
    keys = [c.key for c in choices(DECISION, panel_actions(DECISION, decision["detail"]))]
    assert keys == ["A", "B", "s", "abort"]  # `a` is option A here, so abort is typed as a word
    assert parse("a", decision) == ("option", "A) Postgres")
    assert parse("B", decision) == ("option", "B) SQLite")
    assert parse("abort", decision) == ("abort", "abort")
    assert parse("s", decision) == ("skip", "skip task")
    assert parse("rec", decision) == ("recommended", "SQLite")


def test_a_consultant_option_after_the_actions_keeps_its_positional_letter() -> None:
    options = [*RSA, "Revert to before task 1.1 and redo from there"]
    e = esc(options, ["retry", "skip", "abort"])
    assert [c.key for c in choices(options, panel_actions(options, e["detail"]))] == [
        "r",
        "s",
        "a",
        "D",
    ]
    assert parse("d", e) == ("option", f"D) {options[3]}")


def test_skip_without_a_recommendation_is_refused_not_sent_as_guidance() -> None:
    with pytest.raises(UserError, match="there is no recommendation"):
        parse_answer("skip", ["Redis", "In-memory"], None)
    assert parse_answer("skip", ["Redis", "In-memory"], "B").kind == "recommended"
    assert parse_answer("skip task", ["Redis", "In-memory"], None).kind == "skip"
    e = esc(["Redis", "In-memory"], None)
    with pytest.raises(UserError, match=r"escalation 7: there is no recommendation"):
        answer_from_flags(
            e, text="skip", option=None, recommended=False, retry=False, skip=False, abort=False
        )


@pytest.mark.parametrize(
    ("option", "kind", "text"),
    [
        ("a", "abort", "abort"),  # the key the panel shows
        ("A", "retry", "retry"),  # the letter of hil-request.json: the first option, retry
        ("B", "skip", "skip task"),
        ("retry", "retry", "retry"),
        ("Skip this task", "skip", "skip task"),
    ],
)
def test_option_flag_on_an_action_panel(option: str, kind: str, text: str) -> None:
    e = esc(RSA, ["retry", "skip", "abort"])
    ans = answer_from_flags(
        e, text=None, option=option, recommended=False, retry=False, skip=False, abort=False
    )
    assert (ans.kind, ans.text) == (kind, text)


def test_option_flag_names_the_valid_keys() -> None:
    e = esc(CHECKPOINT, ["done", "skip", "abort"])
    with pytest.raises(UserError, match=r"escalation 7 has no option 'Z'; valid: d, s, a"):
        answer_from_flags(
            e, text=None, option="Z", recommended=False, retry=False, skip=False, abort=False
        )


def test_why_is_always_a_sentence() -> None:
    assert why_sentence("Cache", "ambiguous_requirements").startswith("I found multiple valid")
    assert why_sentence("drops a database object", None, "Fallback sentence here.") == (
        "Fallback sentence here."
    )
    kept = "Spending more money needs your approval."
    assert why_sentence(kept, "external_service") == kept
    hit = PolicyHit("Bash", "psql -c 'DROP TABLE users'", "sql-drop", "drops a database object")
    why = hit.question().why
    assert why == (
        "This command drops a database object, which cannot be undone, so it waits for your approval."
    )
    assert why_sentence(why) == why


# -- in a real terminal ---------------------------------------------------------------------------


def test_a_aborts_on_the_retry_skip_abort_panel_in_a_terminal(tmp_path: Path) -> None:
    prompt = b"Your choice (r/s/a) or guidance"
    term = terminal(
        tmp_path,
        ["run", str(EXAMPLES / "doomed_to_fail.md"), "--agent", "replay", "--workdir", "w"],
        [(prompt, b"b"), (prompt, b"a")],
    )
    code, text = term.code, term.text
    assert "r) Retry with guidance" in text and "a) Abort the run" in text, text
    assert "'b' is not one of the choices (r, s, a)" in text
    assert code != 0, text
    esc_ = json.loads(cli(tmp_path, "escalations", "--all", "--json").stdout)[0]
    assert (esc_["response_kind"], esc_["response"]) == ("abort", "abort")
    tasks = json.loads(cli(tmp_path, "status", "--json").stdout)["tasks"]
    assert tasks[0]["status"] == "FAILED"  # aborted, not retried with the guidance "a"


def test_skip_with_no_recommendation_says_so_and_asks_again(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text(
        "# M\n## Task 1.1: Pick a format\n**Description:** write the config\n"
    )
    (tmp_path / "p.replay.yaml").write_text(
        textwrap.dedent("""\
        tasks:
          "1.1":
            - output: "STATUS: needs_human\\nQUESTION: YAML or TOML?\\nOPTIONS:\\nA) YAML\\nB) TOML"
            - output: "Done: wrote config.toml"
        """)
    )
    prompt = b"Your response"
    term = terminal(
        tmp_path,
        ["run", "p.md", "--agent", "replay", "--workdir", "w"],
        [(prompt, b"skip"), (prompt, b"B")],
    )
    code, text = term.code, term.text
    assert "there is no recommendation" in text, text
    assert code == 0, text
    esc_ = json.loads(cli(tmp_path, "escalations", "--all", "--json").stdout)[0]
    assert (esc_["response_kind"], esc_["response"]) == ("option", "B) TOML")


def test_answer_skip_without_a_recommendation_is_one_line_exit_2(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("# M\n## Task 1.1: Pick\n**Description:** pick one\n")
    (tmp_path / "p.replay.yaml").write_text(
        'tasks:\n  "1.1":\n    - output: "STATUS: needs_human\\nQUESTION: YAML or TOML?"\n'
    )
    first = cli(tmp_path, "run", "p.md", "--agent", "replay", "--workdir", "w", "--no-wait")
    assert first.returncode == 3, first.stdout + first.stderr
    esc_id = json.loads(cli(tmp_path, "escalations", "--json").stdout)[0]["id"]
    proc = cli(tmp_path, "answer", str(esc_id), "skip")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        len(proc.stderr.strip().splitlines()) == 1 and "there is no recommendation" in proc.stderr
    )
    assert json.loads(cli(tmp_path, "escalations", "--json").stdout)[0]["status"] == "open"
