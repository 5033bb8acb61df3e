"""Eleventh round (issue 11), one behaviour each, on invented text, written on the spent real set
`tests/corpus_real/holdback8/`: Cline's early export format (`[Tool Use: …]` with `Question:`,
`Follow_up:` and `Result:` lines); a yes/no offer before any work is done; go-ahead gates in
Japanese, Chinese and Korean; a platform that blocked the account, a monthly allowance reached,
a model's rate limit exhausted, a bare `503 … overloaded` line and an API's JSON error object."""

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
