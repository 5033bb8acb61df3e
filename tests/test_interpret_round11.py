"""Rounds 11-13 (issue 11), one behaviour each, on invented text. Round 11 was written on the
spent real set `holdback8` (now in `tests/corpus_real/tune/`): Cline's early export format
(`[Tool Use: …]` with `Question:`, `Follow_up:` and `Result:` lines); a yes/no offer before any
work is done; go-ahead gates in Japanese, Chinese and Korean; a platform that blocked the
account, a monthly allowance reached, a model's rate limit exhausted, a bare `503 … overloaded`
line and an API's JSON error object. Round 12 on the spent `tests/corpus_styles4/`: a request
after finished work, BMAD's HALT line, go-ahead gates in nl/pl, held steps that would destroy
data, pytest and Go failures printed bare, a verifier status with its score, Aider's
context-window refusal. Round 13 on the spent `corpus_styles2`/`3`: requests in other
languages, edits that never landed, a completion marker refuted after it."""

from __future__ import annotations

import pytest
from tests.corpus_cases import first_attempt, outcome_and_category, what_it_does

from orchestrator.interpret import interpret

decide = outcome_and_category


def test_an_exported_followup_question_with_json_suggestions_is_a_question() -> None:
    text = (
        "I read the repository layout.\n"
        "[Tool Use: ask_followup_question]\n"
        "Question: Which storage should the upload service use?\n"
        'Follow_up: [\n  {\n    "text": "S3 bucket",\n    "mode": null\n  },\n'
        '  {\n    "text": "Local disk",\n    "mode": "code"\n  }\n]\n'
    )
    i = interpret(text)
    assert i.verdict == "needs_human"
    assert i.question == "Which storage should the upload service use?"
    assert i.options == ["S3 bucket", "Local disk"]


def test_an_exported_completion_spanning_paragraphs_is_a_report_of_work_done() -> None:
    text = (
        "[Tool Use: attempt_completion]\n"
        "Result: I reviewed the importer and wrote the report.\n\n"
        "Findings:\n- the CSV reader ignores the header row\n- retries are missing\n\n"
        "Would you like me to start on any of these improvements?\n"
    )
    assert decide(text)[0] == "complete"


def test_a_yes_no_offer_before_any_work_waits_for_the_person() -> None:
    text = (
        "I opened the four files in services/notify/.\n\n"
        "These files are empty as well. Would you like me to implement these classes too?"
    )
    assert decide(text)[0] == "escalate"


def test_an_offer_of_the_next_steps_after_work_is_no_question() -> None:
    text = (
        "Benchmark: 27,006 ns/op against 166,894 before (6x faster).\n\n"
        "Next Steps\n1. Use the worker pool in the packed matmul\n2. Tune the panel sizes\n\n"
        "Would you like me to proceed with any of these next steps?"
    )
    assert decide(text)[0] == "complete"


@pytest.mark.parametrize(
    "ending",
    [
        "## 次のステップ\n- この方針で進めてよいか確認してください。\n"
        "- OKなら、初期セットアップを用意します。",
        "数据模型和接口设计如上。请确认后我再开始实现。",
        "如果你已经有仓库地址，可以说一下，我可以帮你写出具体的命令。",
        "구현 계획은 위와 같습니다. 이대로 진행할까요",
    ],
)
def test_a_go_ahead_gate_in_japanese_chinese_or_korean_waits(ending: str) -> None:
    assert decide("Plan.\n\n" + ending)[0] == "escalate", ending


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Your request has been blocked as our system has detected suspicious activity "
            "from your account. Please contact support.",
            ("escalate", "external_service"),
        ),
        (
            "You've reached your monthly chat messages quota. Please reach out to your "
            "organization's admin to enable overages.",
            ("escalate", "external_service"),
        ),
        (
            "Sorry, you have exhausted this model's rate limit. Please wait a moment before "
            "trying again.",
            ("retry", "external_service"),
        ),
        ("503 server is overloaded.", ("retry", "external_service")),
        (
            'Failed to talk to the model: {"error":{"message":"rate limit exceeded",'
            '"code":"rate_limited"}}',
            ("retry", "external_service"),
        ),
    ],
)
def test_platform_notices_seen_in_real_threads(text: str, expected: tuple[str, str]) -> None:
    d = first_attempt(text)
    platform = (d.interpretation or interpret(text)).platform
    assert what_it_does(d, platform) == expected


# -- written on the spent fourth set of realistic styles (`tests/corpus_styles4/`) ----------------


@pytest.mark.parametrize(
    "ending",
    [
        "For 3.2 I need the production domain. Please tell me the hostnames; I'll put them into "
        "`.env.production` and finish the task.",
        "The API is wired up and its 40 tests pass.\n\nPlease confirm one of:\n"
        "1. Keep the old endpoint for a release\n2. Remove it now",
    ],
)
def test_a_request_after_finished_work_still_waits_for_the_person(ending: str) -> None:
    text = "Subtasks 3.1 and 3.3 are done and tested (22 tests pass).\n\n" + ending
    assert decide(text)[0] == "escalate", ending


def test_aftercare_after_finished_work_asks_nothing() -> None:
    text = (
        "Fixed the TOC conversion; the script passes now.\n\n"
        "If you encounter any further issues, please share the new logs!"
    )
    assert decide(text)[0] == "complete"


@pytest.mark.parametrize(
    "ending",
    [
        "HALT: unapproved dependency needed — confirm with user.\n\nTask 1 is done and tested "
        "(14 tests pass). The QR task needs `qrcode`, which the tech stack does not list.",
        "本当に共有ブランチ develop を force push してよいか、確認をお願いします。",
        "Graag uw keuze: een baseline-migratie maken, of bevestigen dat een reset de bedoeling is.",
        "Wdrożenie na produkcję wymaga Twojej zgody. Czy mam kontynuować?",
    ],
)
def test_a_halt_or_a_go_ahead_gate_in_other_languages_waits(ending: str) -> None:
    assert decide("Release 1.9.0 prepared; build and tests pass.\n\n" + ending)[0] == "escalate"


def test_a_halt_after_repeated_failures_is_a_failure_not_a_question() -> None:
    text = (
        "FAILED tests/test_cart.py::test_total - assert 10 == 12\n\n"
        "HALT: 3 failed attempts at the same fix; the cart total is still wrong."
    )
    assert decide(text)[0] == "retry"


@pytest.mark.parametrize(
    "held",
    [
        "`terraform plan` shows it would **destroy `aws_s3_bucket.archive`**, which holds 2M "
        "objects. I have not run `terraform apply`. Please confirm.",
        "This deletes the cluster and its persistent disks, including the ledger volume.\n"
        "Not executed. Needs explicit approval.",
    ],
)
def test_a_step_held_back_that_would_destroy_data_is_destructive(held: str) -> None:
    assert decide("Decommission task.\n\n" + held) == ("escalate", "extreme_destructive")


def test_pytest_failures_printed_without_a_fence_after_a_commit_are_a_failure() -> None:
    text = (
        "Applied edit to ledger/statement.py\n"
        "Commit c02b9e8 fix: convert cents to Decimal\n"
        "Running: pytest -q\n"
        "..............F.....                                                     [100%]\n"
        "FAILED tests/test_statement.py::test_csv - AssertionError: '1999' != '19.99'\n"
        "1 failed, 19 passed in 0.58s\n"
    )
    assert decide(text)[0] == "retry"


def test_a_go_compile_error_before_a_claim_of_done_is_a_failure() -> None:
    text = (
        " │ $ go build ./...\n"
        " │ internal/feeds/atom.go:57:14: undefined: parseLoose\n"
        "✦ Atom feed support is finished: entries are parsed into the common Item struct."
    )
    assert decide(text)[0] == "retry"


def test_a_verifier_status_with_its_score_is_read() -> None:
    text = "Verifier wrote 04-VERIFICATION.md\nStatus: gaps_found — score 3/5 must-haves verified\n"
    assert decide(text)[0] == "retry"


def test_aiders_context_window_refusal_is_an_ordinary_failure() -> None:
    text = (
        "Your estimated chat context of 214,880 tokens exceeds the 200,000 token limit for "
        "the model!\nTo reduce the chat context:\n- Use /drop to remove unneeded files\n"
        "Try to proceed anyway? (Y)es/(N)o [Yes]: n\n"
    )
    assert decide(text)[0] == "retry"


# -- written on the spent second and third sets of realistic styles -------------------------------


@pytest.mark.parametrize(
    "request_",
    [
        "Preciso que você rode isto no computador da impressora e me envie a saída completa.",
        "Pouvez-vous installer l'APK sur votre téléphone et me dire si les icônes restent "
        "lisibles.",
        "Potresti esportare i frame come PNG nella cartella design/.",
    ],
)
def test_a_request_in_other_languages_waits_for_the_person(request_: str) -> None:
    assert decide("The build is ready.\n\n" + request_)[0] == "escalate", request_


def test_advice_in_the_present_tense_is_no_request() -> None:
    text = (
        "Para localizar um elemento pelo nome parcial da classe, você pode usar o seletor XPath "
        "com a função `contains()`."
    )
    assert decide(text)[0] == "complete"


@pytest.mark.parametrize(
    "claim",
    [
        "I tried to add multi-currency grouping, but the patch did not apply because the "
        "function body differs from what I expected.",
        "The parser is implemented and its tests pass. mypy still reports 3 errors about "
        "optional values.",
        "[2026-11-24 01:36:02] [ERROR] Claude Code exited with code 137\n"
        "[2026-11-24 01:36:02] [WARN] No status block found in output",
    ],
)
def test_a_change_that_never_landed_or_errors_left_is_a_failure(claim: str) -> None:
    assert decide(claim)[0] == "retry", claim


def test_a_completion_marker_refuted_by_a_failure_printed_after_it_is_a_failure() -> None:
    text = (
        "All items done.\n\n<promise>COMPLETE</promise>\n\n```\n"
        "--- FAIL: TestRedirectExpired (0.00s)\n    redirect_test.go:48: expected 410, got 302\n"
        "FAIL\n```\n"
    )
    assert decide(text)[0] == "retry"
    # printed before the marker, the failure is one the agent went on to fix
    fixed = "```\n--- FAIL: TestRedirectExpired (0.00s)\nFAIL\n```\n\nFixed.\n\n<promise>COMPLETE</promise>\n"
    assert decide(fixed)[0] == "complete"


# -- round 14, written on the spent fifth set of realistic styles (`tests/corpus_styles5/`) -------


@pytest.mark.parametrize(
    "ending",
    [
        "The next step is the production rollout. Per the release policy I'm holding here. "
        'Reply "ship it" when you want me to run the production deploy.',
        "Please open http://localhost:4173/invoices/42, print it to PDF on A4 and tell me whether "
        "the page breaks look right.",
        "Merci d'ouvrir la page sur votre téléphone, de la comparer à la maquette et de me dire "
        "« validé » ou la liste des écarts.",
        "I'd like your go-ahead before spending research credits on this.",
        "Options:\n1. Approve release now\n2. Approve with a 10% rollout\n3. Hold",
    ],
)
def test_a_go_ahead_or_a_check_only_the_person_can_make_waits(ending: str) -> None:
    text = "Story 9.2 is implemented; 498 tests pass.\n\n" + ending
    assert decide(text)[0] == "escalate", ending


def test_a_status_line_is_read_with_the_json_body_under_it() -> None:
    text = (
        "[2026-11-24T10:07:04] ERROR: unexpected status 429 Too Many Requests: {\n"
        '  "error": {\n    "message": "You exceeded your current quota.",\n'
        '    "code": "insufficient_quota"\n  }\n}\n'
        "[2026-11-24T10:07:04] ERROR: retries exhausted (0 of 5 attempts succeeded)\n"
    )
    assert decide(text) == ("escalate", "external_service")
