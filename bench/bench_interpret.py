"""How long the interpreter takes on 64 KB of agent output: pathological shapes next to realistic ones.

The runner interprets the last 64 KB of every attempt, so every shape must stay well under a
second (the goal: ≤ 1 s each). Realistic outputs are corpus files repeated up to 64 KB; the
pathological ones are what made the old interpreter quadratic or worse.

    uv run python bench/bench_interpret.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from orchestrator.interpret import interpret_rules

SIZE = 64 * 1024
ROOT = Path(__file__).resolve().parent.parent
QUESTION = "\n\nWhich option should I use?\n"
MARKED = "\nSTATUS: needs_human\nQUESTION: Which one?\n"


def fill(unit: str, tail: str = "", head: str = "") -> str:
    """HEAD, then UNIT repeated, then TAIL: SIZE characters in all."""
    room = SIZE - len(head) - len(tail)
    return head + (unit * (room // len(unit) + 1))[:room] + tail


def corpus(name: str) -> str:
    text = (ROOT / "tests" / "corpus" / name).read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
    return fill(body + "\n")


def cases() -> dict[str, str]:
    return {
        "realistic: Codex, failures then fixed": corpus(
            "completed/long_codex_failures_then_fixed.txt"
        ),
        "realistic: Codex, explores then asks": corpus(
            "needs_human/long_codex_exploration_then_options.txt"
        ),
        "realistic: Aider, tests still red": corpus("failed/aider_test_still_fails.txt"),
        "numbered fragments on one line": fill("1. Fix it. 2. Done. "),
        "numbered fragments, one per line": fill("1. a\n2. b\n", QUESTION),
        "repeated list marker `2. item`": fill("2. item\n", QUESTION),
        "repeated letter marker `b) item`": fill("b) item\n", QUESTION),
        "repeated bold item `**2. foo**`": fill("**2. foo**\n", QUESTION),
        "question fragments `Which? `": fill("Which? "),
        "one 10 MB line (its last 64 KB)": ("word " * (10 * 1024 * 1024 // 5))[-SIZE:],
        "one line of spaces, then a question": fill(" ", QUESTION),
        "blank lines, then a marker": fill("\n", MARKED),
        "unclosed `<loop-complete>` + blank lines": fill("\n", head="<loop-complete>"),
        "many unclosed `<loop-blocked>`": fill("<loop-blocked>"),
        "RALPH block of blank lines": fill("\n", head="---RALPH_STATUS---\nSTATUS: BLOCKED\n"),
        "many unclosed `<ask_followup_question>`": fill("<ask_followup_question><question>x"),
        "quoted lines `> ` (Aider tool output)": fill("> Applied edit to a.py  \n", tail=QUESTION),
        "'once you' without an end": fill("once you have ", tail=QUESTION),
        # round 4's patterns: inline options, announced steps, tool records, recommendations
        "inline `(a) … or` without a `(b)`": fill("(a) this or "),
        "announced steps `Let's …` on one line": fill("Let's run it ", tail=":"),
        "tool records `Status:` + blank lines": fill("Status: **completed**\n \n \n"),
        "unclosed `<tool-use>` records": fill("<tool-use x><details><summary>Tool use</summary>"),
        "'I recommend' without an option": fill("I recommend starting with "),
        "many unclosed code fences ```` ```python ````": fill("```python\n"),
        "lines of punctuation (a `YOUR ACTION:` scan)": fill("!" * 61 + "\n"),
        "checkpoint box lines": fill("║ CHECKPOINT: " + "x" * 60 + " ║ y\n"),
        "one exported `attempt_completion` with a long result": (
            "[Tool Use: attempt_completion]\nResult: " + "x " * (SIZE // 2)
        ),
        "an exported `Follow_up: [` never closed": (
            "[Tool Use: ask_followup_question]\nQuestion: q?\nFollow_up: ["
            + '{"text": "a"},' * (SIZE // 15)
        ),
        "`HALT:` lines": fill("HALT: x\n"),
        # round 15-16's patterns: Codex command records, menus, quoted-message lists
        "one line of unclosed `bash -lc '` records": fill("bash -lc 'x in y "),
        "Codex command records that never end": fill("bash -lc 'make test' exited 1 in \n"),
        "menu cursor lines `❯ 1. x`": fill(" ❯ 1. Type here\n"),
        "`- `x` → ` list items on one line": fill("- `x` → "),
        "a command's output: one line of CJK runs with no full stop": "$ ls\n"
        + fill("中文字符中文a"),
        "a line of spaces over a CLI's `Allow execution of` prompt": fill(
            " ", tail="x │\n│ Allow execution of: 'rm'?\n"
        ),
        # an agent CLI's structured output captured as text (`interpret.structured`)
        "stream-json lines of tool calls": fill(
            '{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash",'
            '"input":{"command":"npm test"}}]}}\n'
        ),
        "one JSON object's `{` line never closed": "{\n" + fill('  "response": "x",\n'),
        "many `{` lines, one `}` at the end": fill("{\n", tail="}\n"),
    }


def main() -> None:
    print(f"| output ({SIZE // 1024} KB each) | verdict | seconds |")
    print("| --- | --- | --- |")
    worst = 0.0
    for name, text in cases().items():
        start = time.perf_counter()
        result = interpret_rules(text)
        took = time.perf_counter() - start
        worst = max(worst, took)
        print(f"| {name} | {result.verdict} | {took:.3f} |", flush=True)
    print(f"\nslowest: {worst:.3f} s (goal ≤ 1 s)")
    sys.exit(0 if worst <= 1.0 else 1)


if __name__ == "__main__":
    main()
