"""Round 15 (issue 11), one behaviour each, on invented text. Written on the spent realistic sets
`tests/corpus_styles4`-`6` and the spent real sets `holdback9`/`holdback10`: the last result a
tool printed speaks against the agent's claim (a failing run with nothing passing after it, in
whatever layout the log gives it), and a runner's success line counts wherever the layout put
it."""

from __future__ import annotations

import pytest
from tests.corpus_cases import outcome_and_category

from orchestrator.interpret import interpret

decide = outcome_and_category

CLAIMS_OVER_A_FAILING_RUN = [
    # Claude Code: the claim follows a red run and nothing ran after it
    "⏺ Bash(npx vitest run)\n  ⎿   FAIL  src/cart.test.ts > applies coupon\n"
    "     Tests  2 failed | 11 passed (13)\n\n"
    "⏺ The coupon rules are implemented and the cart tests cover them. Ready for review.",
    # Gemini CLI's box around a Maven build, then a claim in Polish
    " ╭──────────────────────────────╮\n │ ✔  Shell mvn -q compile       │\n"
    " │    [ERROR] Foo.java:[12,3] cannot find symbol │\n │    [INFO] BUILD FAILURE │\n"
    " ╰──────────────────────────────╯\n✦ Gotowe. Dodałem klasę `Raport` i metodę `generuj()`.",
    # an edit tool that changed nothing, then a claim of the change
    " ╭──────────────────────────────╮\n │ x  Edit src/lib/slug.ts      │\n"
    " │    Failed to edit, 0 occurrences found for old_string. No edits made. │\n"
    " ╰──────────────────────────────╯\n"
    "✦ Slugs now keep unicode letters, so 'Crème brûlée' becomes 'crème-brûlée'.",
]


@pytest.mark.parametrize("text", CLAIMS_OVER_A_FAILING_RUN)
def test_a_claim_made_over_a_failing_last_result_is_a_failure(text: str) -> None:
    assert decide(text) == ("retry", None)


def test_a_completion_marker_after_a_failing_run_is_refuted() -> None:
    text = (
        "```\nFAILED tests/test_export.py::test_headers - KeyError: 'sheet'\n"
        "2 failed, 40 passed in 1.31s\n```\n"
        "Marked the export item done in fix_plan.md.\n<promise>COMPLETE</promise>\n"
    )
    i = interpret(text)
    assert i.verdict == "failed"
    assert i.error is not None and "2 failed" in i.error


RUNS_THAT_PASSED_AFTER_A_FAILURE = [
    # Claude Code's result prefix before `go test`'s ok line
    "⏺ Bash(go test ./...)\n  ⎿  --- FAIL: TestRefill (0.00s)\n      FAIL\n"
    "⏺ Update(limiter/bucket.go)\n  ⎿  Updated limiter/bucket.go with 2 additions\n"
    "⏺ Bash(go test ./...)\n  ⎿  ok  \texample.com/gate/limiter\t0.012s\n\n"
    "⏺ The limiter refills fractionally now; the earlier failure was my rounding bug.",
    # a Codex log whose runner lines its layout leaves bare
    "exec\n/bin/bash -lc 'cargo test' in /w/p exited 101:\n"
    "test result: FAILED. 30 passed; 1 failed; 0 ignored\n\n"
    "file update\nM /w/p/src/date.rs\n"
    "exec\n/bin/bash -lc 'cargo test' in /w/p succeeded in 4.1s:\n"
    "test result: ok. 31 passed; 0 failed; 0 ignored\n\n"
    "codex\nLowercase offsets are accepted now and every parser test passes.\n",
]


@pytest.mark.parametrize("text", RUNS_THAT_PASSED_AFTER_A_FAILURE)
def test_a_run_that_passed_after_the_failure_speaks_for_the_claim(text: str) -> None:
    assert decide(text) == ("complete", None)
