"""Error normalisation, similarity and the loop detector (seed 000 Task 4.3, issue 3 §2)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from orchestrator.loops import (
    LoopDetector,
    LoopDetectorConfig,
    did_not_run,
    error_signature,
    fewer_failures,
    normalise_error,
    paraphrased_loop,
    similarity,
)

TRACEBACK = """\
{ts} INFO [{pid}] running pytest in /tmp/{tmp}/work
Traceback (most recent call last):
  File "/tmp/{tmp}/work/src/app/loader.py", line {line}, in load
    frame = pandas.read_csv(path)
  File "/tmp/{tmp}/work/src/app/model.py", line {line2}, in <module>
    import pandas
ModuleNotFoundError: No module named 'pandas'
{ts} ERROR worker pid {pid} exited after {dur}s (object at 0x{addr:x}, run {uuid})
"""


def _traceback(rng: random.Random) -> str:
    return TRACEBACK.format(
        ts=f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T{rng.randint(10, 23)}:0{rng.randint(0, 9)}:"
        f"{rng.randint(10, 59)}.{rng.randint(100, 999)}Z",
        pid=rng.randint(1000, 99999),
        tmp=f"tmp{rng.getrandbits(40):010x}",
        line=rng.randint(1, 400),
        line2=rng.randint(1, 400),
        dur=f"{rng.random() * 9:.2f}",
        addr=rng.getrandbits(48),
        uuid=f"{rng.getrandbits(32):08x}-1d3e-4a5b-8c7d-{rng.getrandbits(48):012x}",
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2024-05-01T12:00:03.123Z boom", "<ts> boom"),
        ("[2024-05-01 12:00:03,456] boom", "[<ts>] boom"),
        ("12:00:03 boom", "<time> boom"),
        ("Jan  5 12:00:03 host app[4242]: boom", "<date> <time> host app[<n>]: boom"),
        ('File "x.py", line 42, in f', 'File "x.py", line <n>, in f'),
        ("src/app.py:42:7: E501 line too long", "src/app.py:<n>: E501 line too long"),
        ("a.c:12: error: x", "a.c:<n>: error: x"),
        ("src/app.ts(12,5): error TS2345", "src/app.ts(<n>): error TS2345"),
        ("<Foo object at 0x7f3a2b1c9d>", "<Foo object at 0x<addr>>"),
        ("/tmp/tmpk3j4h5qz/src/app.py", "<tmp>/src/app.py"),
        ("/tmp/pytest-of-bob/pytest-17/test_x0/a.py", "<tmp>/test_x0/a.py"),
        ("/private/var/folders/ab/cd_ef12/T/tmpxyz123/a.py", "<tmp>/a.py"),
        ("worker pid 1234 died", "worker pid <n> died"),
        ("PID: 77 died", "PID: <n> died"),
        ("1 failed in 0.53s", "1 failed in <dur>"),
        ("done in 1.2 seconds; took 12ms; real 0m1.234s", "done in <dur>; took <dur>; real <dur>"),
        ("id 123e4567-e89b-12d3-a456-426614174000", "id <uuid>"),
        ("at commit a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "at commit <hash>"),
        ("short sha 3f9e2a1", "short sha <hash>"),
        ("words like decade and defaced stay", "words like decade and defaced stay"),
        ("\x1b[31mFAILED\x1b[0m tests", "FAILED tests"),
        ("listening on 127.0.0.1:54321", "listening on 127.0.0.1:<port>"),
        ("a  \t b\n\n\n   c  ", "a b\nc"),
    ],
)
def test_normalise_error_strips_what_varies(raw: str, expected: str) -> None:
    assert normalise_error(raw) == expected


def test_normalise_keeps_the_error_itself() -> None:
    text = "ModuleNotFoundError: No module named 'pandas'"
    assert normalise_error(text) == text


def test_normalise_max_chars_keeps_only_the_tail_from_a_line_start() -> None:
    text = "first line\n" + "x" * 50 + "\nlast line KeyError"
    out = normalise_error(text, max_chars=30)
    assert out == "last line KeyError"


def test_same_error_with_different_run_details_scores_high() -> None:
    rng = random.Random(7)
    a, b = _traceback(rng), _traceback(rng)
    assert a != b
    assert normalise_error(a) == normalise_error(b)
    assert similarity(a, b) >= 0.9


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "ModuleNotFoundError: No module named 'pandas'",
            "AssertionError: assert response.status_code == 201",
        ),
        (
            "Failed: ImportError - no module named pandas",
            "Failed: TypeError - expected str, got int",
        ),
        (
            'Traceback (most recent call last):\n  File "x.py", line 3, in main\n    foo()\n'
            "ImportError: No module named 'pandas'",
            'Traceback (most recent call last):\n  File "x.py", line 9, in main\n    foo()\n'
            "TypeError: expected str, got int",
        ),
        (
            "src/cache.py:10:1: F401 `os` imported but unused",
            "FAILED tests/test_cache.py::test_evicts_oldest - KeyError: 'a'",
        ),
    ],
)
def test_different_errors_score_low(a: str, b: str) -> None:
    assert similarity(a, b) < 0.5
    assert similarity(b, a) < 0.5


def test_similarity_bounds_and_edges() -> None:
    assert similarity("", "") == 1.0
    assert similarity("KeyError: 'a'", "") == 0.0
    assert similarity("KeyError: 'a'", "KeyError: 'a'") == 1.0
    value = similarity("KeyError: 'a'", "KeyError: 'b'")
    assert 0.0 < value < 1.0


LOGGY = st.text(
    alphabet=st.sampled_from(list("abcXYZ019 :/._-'\"\n\t\x1b[]()")) | st.characters(),
    max_size=3000,
)


@settings(max_examples=200, deadline=None)
@given(LOGGY, LOGGY)
def test_similarity_is_a_symmetric_score(a: str, b: str) -> None:
    value = similarity(a, b)
    assert 0.0 <= value <= 1.0
    assert value == similarity(b, a)
    assert similarity(a, a) == 1.0


def test_similarity_on_megabyte_logs_returns_a_sane_value() -> None:
    rng = random.Random(3)

    def log() -> str:  # the same run again: other times, pids and durations
        return "\n".join(
            f"2024-05-01T12:{i % 60:02d}:{rng.randint(10, 59)}Z [{rng.randint(1000, 9999)}] "
            f"step {i} ok in {rng.random():.3f}s"
            for i in range(50_000)
        )

    noise_a, noise_b = log(), log()
    assert len(noise_a) > 2_000_000
    assert noise_a != noise_b
    same_a = noise_a + "\n" + _traceback(rng)
    same_b = noise_b + "\n" + _traceback(rng)
    other = noise_a + "\nFAILED tests/test_api.py::test_login - assert 401 == 200\n1 failed in 2.1s"
    high = similarity(same_a, same_b)
    low = similarity(same_a, other)
    assert 0.9 <= high <= 1.0
    assert 0.0 <= low < 0.8
    assert high > low


def test_error_signature_is_the_last_error_class() -> None:
    rng = random.Random(1)
    assert error_signature(_traceback(rng)) == "ModuleNotFoundError"
    assert error_signature("src/a.py:1:1: E501 line too long") == "E501"
    assert error_signature("all good") is None


# --- the loop detector ---------------------------------------------------------------------


def test_same_error_three_times_is_a_loop() -> None:
    rng = random.Random(11)
    errors = [_traceback(rng) for _ in range(3)]
    verdict = LoopDetector().check(errors, task_id="1.1")
    assert verdict is not None
    assert verdict.kind == "repeated"
    assert verdict.message == "Task 1.1 failed 3 times with similar errors"
    assert verdict.similarity >= 0.9
    assert verdict.similarity_line == f"Error similarity: {verdict.similarity:.0%}"


def test_two_similar_errors_are_not_yet_a_loop() -> None:
    rng = random.Random(5)
    assert LoopDetector().check([_traceback(rng), _traceback(rng)], task_id="1.1") is None


def test_different_errors_are_progress_not_a_loop() -> None:
    errors = [
        "ModuleNotFoundError: No module named 'pandas'",
        "TypeError: expected str, got int",
        "FAILED tests/test_model.py::test_total - assert 41 == 42",
    ]
    assert LoopDetector().check(errors, task_id="1.1") is None


def test_a_b_a_is_an_oscillation() -> None:
    a = "FAILED tests/test_cache.py::test_evicts_oldest - KeyError: 'a'"
    b = "src/cache.py:12:1: F401 `collections.OrderedDict` imported but unused"
    verdict = LoopDetector().check([a, b, a.replace("'a'", "'a'  ")], task_id="2.3")
    assert verdict is not None
    assert verdict.kind == "oscillation"
    assert verdict.message.startswith("Task 2.3 is oscillating between two errors")
    assert verdict.similarity >= 0.8


def test_a_b_c_is_not_an_oscillation() -> None:
    errors = [
        "FAILED tests/test_cache.py::test_evicts_oldest - KeyError: 'a'",
        "src/cache.py:12:1: F401 `collections.OrderedDict` imported but unused",
        "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    ]
    assert LoopDetector().check(errors) is None


def test_only_the_newest_errors_decide() -> None:
    same = "ModuleNotFoundError: No module named 'pandas'"
    errors = ["TypeError: expected str, got int", same, same, same]
    verdict = LoopDetector().check(errors, task_id="1.1")
    assert verdict is not None and verdict.kind == "repeated"
    # a fresh different error after a repeat breaks the streak
    assert LoopDetector().check([same, same, "SyntaxError: invalid syntax"]) is None


def test_threshold_and_attempt_count_are_configurable() -> None:
    same = "AssertionError: assert 3 == 4"
    strict = LoopDetector(LoopDetectorConfig(max_task_attempts=4))
    assert strict.check([same] * 3) is None
    verdict = strict.check([same] * 4, task_id="7")
    assert verdict is not None and verdict.message == "Task 7 failed 4 times with similar errors"

    near = ["KeyError: 'alpha'", "KeyError: 'alphb'", "KeyError: 'alphc'"]
    loose = LoopDetector(LoopDetectorConfig(error_similarity_threshold=0.5))
    tight = LoopDetector(LoopDetectorConfig(error_similarity_threshold=0.99))
    assert loose.check(near) is not None
    assert tight.check(near) is None


def test_check_attempts_is_seeds_count_rule() -> None:
    errors = ["KeyError: 'a'", "TypeError: x", "SyntaxError: y"]
    detector = LoopDetector()
    assert detector.check(errors) is None
    verdict = detector.check_attempts(errors, task_id="1.1")
    assert verdict is not None and verdict.kind == "max_attempts"
    assert verdict.message == "Task 1.1 failed 3 times"
    assert detector.check_attempts(errors[:2], task_id="1.1") is None


def test_e2e_fix_attempts_are_capped() -> None:
    detector = LoopDetector(LoopDetectorConfig(max_e2e_fix_attempts=5))
    errors = [
        "FAILED tests/e2e/test_flow.py::test_signup - assert 500 == 201",
        "FAILED tests/e2e/test_flow.py::test_login - KeyError: 'token'",
        "E2E: timeout waiting for http://127.0.0.1:8000/health",
        "FAILED tests/e2e/test_flow.py::test_logout - AttributeError: 'NoneType' object",
    ]
    assert detector.check_e2e(errors) is None
    errors.append("SyntaxError: invalid syntax in app/routes.py")
    verdict = detector.check_e2e(errors)
    assert verdict is not None
    assert verdict.kind == "max_attempts"
    assert "5 times" in verdict.message


def test_e2e_oscillation_is_detected_before_the_cap() -> None:
    a = "FAILED tests/e2e/test_flow.py::test_signup - assert 500 == 201"
    b = "FAILED tests/e2e/test_flow.py::test_login - KeyError: 'token'"
    verdict = LoopDetector().check_e2e([a, b, a])
    assert verdict is not None and verdict.kind == "oscillation"
    assert verdict.message.startswith("Milestone verification is oscillating")


def test_detector_is_pure() -> None:
    detector = LoopDetector()
    errors = ["KeyError: 'a'"] * 3
    first = detector.check(errors, task_id="1")
    second = detector.check(errors, task_id="1")
    assert first == second
    assert errors == ["KeyError: 'a'"] * 3


# --- what the similarity alone misreads ------------------------------------------------------

WRONG_FOLDER = (
    "npm error code ENOENT\nnpm error path /work/package.json\n"
    "npm error enoent Could not read package.json: Error: ENOENT: no such file or directory\n"
)


def test_a_check_that_could_not_start_is_left_out_of_the_comparison() -> None:
    a = "FAIL src/cart.test.ts\n  ● cart › totals\n    Expected: 3\n    Received: 2\nTests: 1 failed"
    assert did_not_run(WRONG_FOLDER) and not did_not_run(a)
    # run from the wrong folder, then the real run, then the wrong folder again: no A-B-A
    assert LoopDetector().check([WRONG_FOLDER, a, WRONG_FOLDER.replace("work", "w")]) is None
    # nothing but wrong-folder runs: that is the loop
    verdict = LoopDetector().check([WRONG_FOLDER] * 3)
    assert verdict is not None and verdict.kind == "repeated"


def test_fewer_failing_tests_is_progress_not_a_loop() -> None:
    def run(n: int) -> str:
        return f"FAILED tests/test_a.py::test_x - assert 1 == 2\n== {n} failed, 3 passed in 0.5s =="

    assert fewer_failures([run(5), run(4), run(1)]) == (5, 1)
    assert fewer_failures([run(4), run(5), run(4)]) is None
    assert LoopDetector().check([run(5), run(4), run(1)]) is None
    assert paraphrased_loop([run(5), run(4), run(1)]) is None
    assert LoopDetector().check([run(2), run(2), run(2)]) is not None


def test_a_bare_failure_count_cannot_make_an_oscillation() -> None:
    count = "===== 4 failed, 39 passed in 1.13s ====="
    full = (
        "E   TypeError: Expected a list\n"
        "FAILED tests/test_conv.py::test_from_frame - TypeError: Expected a list\n"
        "===== 4 failed, 27 passed in 1.09s ====="
    )
    assert LoopDetector().check([count, full, count.replace("39", "27")]) is None
    assert paraphrased_loop([count, full, count]) is None


def test_other_failing_tests_under_the_same_boilerplate_are_not_a_loop() -> None:
    def run(test: str) -> str:
        return (
            "Running 1 test using 1 worker\n"
            f"  1) [chromium] › tests/e2e/app.spec.ts:12:7 › App › {test}\n"
            "    Error: expect(locator).toBeVisible() failed\n  1 failed\n"
            "To open last HTML report run:\n  npx playwright show-report\n"
        )

    same = LoopDetector().check([run("opens the cart")] * 3)
    assert same is not None and same.kind == "repeated"
    assert similarity(run("opens the cart"), run("logs in")) < similarity(
        run("opens the cart"), run("opens the cart")
    )
    history = [run("opens the cart"), run("logs in"), run("pays")]
    assert LoopDetector().check(history) is None
    assert paraphrased_loop(history) is None
