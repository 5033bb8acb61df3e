"""What the orchestrator DOES with realistic outputs in eight agents' styles (`tests/corpus_styles/`).

Claude Code, Codex, Gemini CLI, Aider, GSD, ralph, Taskmaster and BMAD outputs, written blind on
2026-11-24 by a session that read neither the rules nor the code nor the other corpora (its
README). They stand in for issue 11's hidden set of realistic styles, on which categories were
the weak part. A hash of the file name splits them, before anything was scored, into `tune`
(rules may be written on it) and `holdback` (scored once, at the end of the round that tunes on
`tune`). Scored as `tests/test_corpus_real.py` scores real outputs: the decision after a first
attempt with no gates, its category, escalations caught, false escalations on finished work.
`pytest tests/test_corpus_styles.py -s` prints the tables.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import pytest
from tests.corpus_cases import FOLDER, load_cases, unsure_rates
from tests.test_corpus_real import CATEGORIES, Figures, mistakes, score, table

CORPUS = Path(__file__).parent / "corpus_styles"
STYLES = ("claude", "codex", "gemini", "aider", "gsd", "ralph", "taskmaster", "bmad")
OTHER_AGENTS = (
    # styles24-27: other agents' and frameworks' own output shapes
    "copilot",
    "cursor",
    "cline",
    "roo",
    "openhands",
    "goose",
    "opencode",
    "amp",
    "claude-flow",
    "superclaude",
)


def split_of(stem: str) -> str:
    """Fixed by the file name before anything was scored (README)."""
    return (
        "tune" if int(hashlib.sha256(f"styles:{stem}".encode()).hexdigest(), 16) % 2 else "holdback"
    )


ALL = load_cases(CORPUS)
CASES = {s: [c for c in ALL if split_of(c.path.stem) == s] for s in ("tune", "holdback")}
# a second set written blind the same way, later, by another session, scored once as a whole
CASES["styles2"] = load_cases(CORPUS.parent / "corpus_styles2")
CASES["styles3"] = load_cases(CORPUS.parent / "corpus_styles3")
CASES["styles4"] = load_cases(CORPUS.parent / "corpus_styles4")
CASES["styles5"] = load_cases(CORPUS.parent / "corpus_styles5")
CASES["styles6"] = load_cases(CORPUS.parent / "corpus_styles6")
CASES["styles7"] = load_cases(CORPUS.parent / "corpus_styles7")
CASES["styles8"] = load_cases(CORPUS.parent / "corpus_styles8")
CASES["styles9"] = load_cases(CORPUS.parent / "corpus_styles9")
for _n in range(10, 28):
    CASES[f"styles{_n}"] = load_cases(CORPUS.parent / f"corpus_styles{_n}")

# (decision, category, escalations caught, false escalations on finished work), as measured.
# Before any rule was written on it (rules of commit 78ee16c): tune 0.885, 0.836, 0.783, 0.050
# (61 cases); holdback 0.841, 0.928, 0.905, 0.043 (69 cases, unsure 33.3%).
# Mechanisms written on `tune` (commit 5460832): a step held back for approval that says it would
# destroy data; a decision named as a person's; markers inside code blocks; "no such host", "no
# provider has a key"; a loop runner's API call budget. Tune after: 0.984, 0.984, 1.000, 0.000.
# `holdback` scored once with them (2026-11-24 09:46 UTC): 0.841, 0.942, 0.905, 0.043, unsure
# 33.3% — one category more, no decision changed: its misses are 8 failures read as finished, one
# escalation read as finished and one as failed, one finished output escalated.
# Round 8 was then written on all 130 (both halves spent) and the real holdback7; tune and
# holdback rose to 0.962 decisions together (in-sample).
# styles2 (tests/corpus_styles2/, 130 cases written blind by another session while round 8 was
# written; 42 completed, 47 failed, 41 needs_human), scored once at 09:58 UTC: rules of the
# session's start (commit d35326e) 0.823, 0.892, 0.805, 0.048; after round 7 and the styles
# mechanisms (2f2b988) 0.831, 0.900, 0.829, 0.048; after round 8 (4d261a9) 0.838, 0.900, 0.829,
# 0.048, unsure 33.8%. Its misses: 8 failures read as finished, 4 read as escalations, 4
# escalations read as finished and 3 as failed, 2 finished outputs escalated.
# Round 9 was then written on styles2 (spent): in-sample 0.838 -> 0.908, 0.931, 0.976, 0.024.
# styles3 (tests/corpus_styles3/, 130 more written blind by a third session while round 9 was
# written; 43 completed, 45 failed, 42 needs_human), scored once at 10:11 UTC: rules of the
# session's start (d35326e) 0.831, 0.923, 0.786, 0.023; after round 8 (04743a9) 0.846, 0.931,
# 0.810, 0.023; after round 9 (c7e5360) 0.854, 0.938, 0.833, 0.023, unsure 33.8%. Its misses:
# 10 failures read as finished, 5 escalations read as finished and 2 as failed, one failure and
# one finished output escalated. Round 10 was then written on styles3 (spent): in-sample 0.885.
# styles4 (tests/corpus_styles4/, 136 more written blind by a fourth session while round 10 was
# written; 44 completed, 45 failed, 47 needs_human; 24 not in English), scored once at 10:22 UTC:
# rules of the session's start (d35326e) 0.801, 0.875, 0.745, 0.045; after round 9 (c7e5360) and
# after round 10 (80f9a84) alike 0.824, 0.882, 0.787, 0.045, unsure 36.0%.
# Rounds 12 and 13 (2026-11-24, the day's second session) were written on styles4, then on
# styles2 and styles3 (all spent), in-sample: styles2 0.938, 0.931, 1.000, 0.024; styles3 0.938,
# 0.977, 1.000, 0.023; styles4 0.897, 0.890, 0.915, 0.045.
# styles5 (tests/corpus_styles5/, 145 written blind by a fifth session while rounds 11-13 were
# written; 49 completed, 49 failed, 47 needs_human; 27 not in English), scored once at 13:12 UTC
# with the rules of the session's start (683f17a) and after rounds 11, 12 and 13 (990efd0,
# 4856b36, 56fa8e0): 0.793, 0.945, 0.809, 0.041 all four times, unsure 42.1-42.8%. Not one case
# moved. Its misses: 14 failures read as finished, 7 escalations read as finished and 2 as
# failed, 4 failures escalated, 2 finished outputs escalated and one retried.
# Round 14 was then written on styles5 (spent): in-sample 0.834, 0.931, 0.936, 0.041 (and
# holdback 0.957: the same Codex quota-in-a-JSON-body shape).
MEASURED: dict[str, tuple[float, float, float, float]] = {
    "tune": (0.984, 0.984, 1.000, 0.000),
    "holdback": (0.841, 0.942, 0.905, 0.043),
    "styles2": (0.938, 0.931, 1.000, 0.024),
    "styles3": (0.938, 0.977, 1.000, 0.023),
    "styles4": (0.897, 0.890, 0.915, 0.045),
    "styles5": (0.793, 0.945, 0.809, 0.041),
    # styles6 (tests/corpus_styles6/, 142 written blind by a sixth session while round 14 was
    # written; 49 completed, 48 failed, 45 needs_human; 32 not in English), scored once at 13:36
    # UTC: rules of the session's start (683f17a) 0.845, 0.930, 0.733, 0.020; after round 11
    # (990efd0) the same; after round 12 (4856b36), 13, 14 and the brain's rules (708462e) alike
    # 0.859, 0.930, 0.778, 0.020, unsure 40.1% — two BMAD HALT lines (round 12), nothing else.
    "styles6": (0.859, 0.930, 0.778, 0.020),
    # Round 15 (2026-11-24, the day's third session) was written on styles4-6 (spent) and the
    # real holdback9/10, in-sample: styles4 0.912, 0.890, 0.936, 0.045; styles5 0.883, 0.931,
    # 0.957, 0.041; styles6 0.951, 0.944, 0.978, 0.020. Its main mechanism: the last result a
    # tool printed failed, nothing passed after it, and the agent's last words neither say it
    # was fixed and run again nor explain it as not this work's: the claim is refuted.
    # styles7 (tests/corpus_styles7/, 120 written blind by a seventh session while round 15 was
    # written; 40 completed, 40 failed, 40 needs_human; 19 not in English; its writer saw the
    # names, not the contents, of the files under tests/), scored once at 15:50 UTC: rules of the
    # session's start (653042b) 0.842, 0.858, 0.850, 0.050; after round 15 (2ef24a4) 0.883,
    # 0.875, 0.900, 0.050, unsure 37.5% — four failures read as finished caught by the refuted
    # claim, a destructive step held in prose and a Portuguese "which" question; one finished
    # output lost (a lint finding the agent said was in code the task left alone). Misses at
    # the end: 5 failures read as finished, 3 escalations read as finished and one as failed, 3
    # finished outputs retried and 2 escalated. That lost case was then fixed (in-sample 0.892).
    "styles7": (0.883, 0.875, 0.900, 0.050),
    # Round 16 was then written on styles7 (spent) and the real holdback11: in-sample styles7
    # 0.975, 0.908, 0.975, 0.000.
    # styles8 (tests/corpus_styles8/, 120 written blind by an eighth session while round 16 was
    # written; 40 completed, 40 failed, 40 needs_human; 19 not in English; its writer read the
    # real corpus's format README by mistake, no rules, code or cases), scored once at 16:15 UTC:
    # rules of the session's start (653042b) 0.833, 0.883, 0.850, 0.125; after round 16 (160af03)
    # 0.867, 0.883, 0.875, 0.100, unsure 34.2% -> 32.5% — four gained, none lost: a claim over a
    # red run, a run that passed after a failure, a fixture's quoted errors no longer escalated,
    # an escalation caught. Misses at the end: 6 failures read as finished, 4 escalations read
    # as finished and one as failed, 4 finished outputs escalated, one failure escalated.
    "styles8": (0.867, 0.883, 0.875, 0.100),
    # Round 17 was then written on styles8 (spent): in-sample 0.933, 0.900, 0.950, 0.075.
    # styles9 (tests/corpus_styles9/, 120 written blind by a ninth session while round 17 was
    # written; 40 completed, 40 failed, 40 needs_human; 21 not in English), scored once at 16:28
    # UTC: rules of the session's start (653042b) 0.775, 0.875, 0.850, 0.100; after round 17
    # (13d4fa2) 0.842, 0.908, 0.900, 0.075, unsure 37.5% -> 35.0% — eight gained, none lost
    # (four failures read as finished: a claim over a red run, BMAD's QA verdict, GSD's plan
    # checker, a Taskmaster task marked done; two destructive commands a CLI held; an IAM
    # permission; a fixture's quoted error). The writers of these sets share one brief, and
    # some of their shapes recur from set to set (GSD's plan checker is in styles5, 7, 8 and
    # 9): part of this carry-over is the writers', not the agents'.
    "styles9": (0.842, 0.908, 0.900, 0.075),
    # Round 18 (2026-11-24, fourth session) was written on styles9 (spent): a tool's own record
    # outranks the claim (Codex's command with its outcome on the next line, Aider's edit-format
    # refusal, ralph's TESTS_STATUS, a task set done over an open subtask, GSD's gaps heading),
    # any question over a final menu asks to pick. In-sample styles9 0.950, 0.925, 1.000, 0.050.
    # styles10 and styles11 (120 each, written blind by two sessions with a new brief: no list
    # of situations to write, a different slant each — situations taken from the tools' public
    # issue threads; overnight logs across many stacks and voices), scored once at 19:15 UTC:
    # rules of the session's start (50a7d8d) styles10 0.808, 0.842, 0.800, 0.075 and styles11
    # 0.892, 0.892, 0.875, 0.050; after round 18 (4fb302d) styles10 0.817, 0.842, 0.800, 0.100
    # (one failure gained: a usage limit's reset read; one finished runbook now retried instead
    # of escalated) and styles11 the same 0.892.
    "styles10": (0.817, 0.842, 0.800, 0.100),
    "styles11": (0.892, 0.892, 0.875, 0.050),
    # Round 19 was written on styles10/11 (spent): a story's status note ("InProgress (awaiting
    # approval)"), the model provider's overload anywhere, a reset in the CLI's notice, a step
    # held back that would lose data in more words, a destructive step at a checkpoint, a write
    # tool's preview is file content, a doc's headings and a runbook's entries are errors written
    # about, a request after an offer's lead. In-sample styles10 0.933, styles11 0.967.
    # styles12 and styles13 (120 each, written blind while round 19 ran, with two more slants:
    # alarming words that are not about the run and confident failures; a different team per
    # case), scored once at 19:41 UTC: rules of the session's start (50a7d8d) styles12 0.850,
    # 0.933, 0.875, 0.025 and styles13 0.842, 0.942, 0.875, 0.075; after round 19 (8c29c92)
    # styles12 0.867, 0.942, 0.875, 0.025 and styles13 0.858, 0.958, 0.875, 0.075 — two gained
    # in each (a runbook no longer retried, a confident failure with no files changed, a usage
    # limit waited for, a subagent's overload backed off from; two destructive categories), none
    # lost. Carry-over is far below the in-sample gains: +1.7 points against +12 and +8.
    "styles12": (0.867, 0.942, 0.875, 0.025),
    "styles13": (0.858, 0.958, 0.875, 0.075),
    # Round 20 was written on styles12/13 (spent): GSD's "— Gaps Found" heading, a story in
    # progress under a HALT line, a story's "Task N" list with a task open, "Needed from you:",
    # a reset written "9h41m". In-sample styles12 0.908, styles13 0.900.
    # styles14 and styles15 (120 each, written blind while round 20 ran; slants: the morning's
    # screens of overnight runs, many cut off; "what the agent printed when X happened" for the
    # situations users ask about most), scored once at 19:52 UTC: rules of the session's start
    # (50a7d8d) styles14 0.883, 0.908, 0.850, 0.050 and styles15 0.925, 0.908, 1.000, 0.025; after
    # round 20 (bb97785) styles14 0.883, 0.917, 0.850, 0.050 (a destructive category) and
    # styles15 0.950, 0.925, 1.000, 0.025 (two BMAD stories with tasks open, a circuit breaker
    # no longer read as a question, a destructive category), none lost.
    "styles14": (0.883, 0.917, 0.850, 0.050),
    "styles15": (0.950, 0.925, 1.000, 0.025),
    # Round 21 was written on styles14/15 (spent): a loop runner's usage-limit wait with the
    # reset printed below it, BMAD's "Gate: FAIL", a story in progress ending on a question,
    # a runner that killed the agent, Gemini CLI's input box under its quota error. In-sample
    # styles14 0.933, styles15 0.958.
    # styles16 and styles17 (120 each, written blind while round 21 ran; slants: the last screen
    # of runs behind overnight pull requests, with real runner output; each tool's typical user
    # community, about half in the user's own language), scored once at 20:03 UTC: rules of the
    # session's start (50a7d8d) styles16 0.917, 0.925, 0.825, 0.000 and styles17 0.883, 0.883,
    # 0.775, 0.000; after round 21 (9f6cb99) styles16 0.933, 0.958, 0.850, 0.000 and styles17
    # 0.892, 0.908, 0.800, 0.000 — four gained (two hourly call limits waited for, a BMAD story
    # with tasks open, a dependency awaiting approval in Korean) and five destructive categories;
    # one lost (a HALT for repeated failures in Portuguese, read as a question; fixed after,
    # in-sample 0.900).
    "styles16": (0.933, 0.958, 0.850, 0.000),
    "styles17": (0.892, 0.908, 0.800, 0.000),
    # Round 22 (2026-11-25) was written on styles18-21 as each was scored once (slants: outputs
    # cut at an arbitrary point at their start; a different kind of project per case, a third in
    # the user's language; half headless JSON; borderline between the three folders). Scored
    # once — rules of the session's start (e66940b) → the commit first scored at: styles18 0.892,
    # 0.908, 0.875, 0.050 and styles19 0.858, 0.875, 0.875, 0.050 both the same at 018ed26 (no
    # interpretation rule had changed yet); styles20 0.792, 0.900, 0.675, 0.025 → 0.808, 0.908,
    # 0.700, 0.025 and styles21 0.892, 0.883, 0.875, 0.075 → 0.900, 0.892, 0.875, 0.075 (0116517).
    "styles18": (0.892, 0.908, 0.875, 0.050),
    "styles19": (0.858, 0.875, 0.875, 0.050),
    "styles20": (0.808, 0.908, 0.700, 0.025),
    "styles21": (0.900, 0.892, 0.875, 0.075),
    # styles22 and styles23 (written blind at the round's end; slants: long sessions, 3,000-5,000
    # characters each; teams with their own setup — slash commands, MCP tools, hooks), scored
    # once: styles22 0.933, 0.917, 0.925, 0.000 → 0.933, 0.925, 0.925, 0.000 (4ed1dc6); styles23
    # 0.925, 0.892, 0.900, 0.050 → 0.933, 0.900, 0.925, 0.050 (ba36faa).
    "styles22": (0.933, 0.925, 0.925, 0.000),
    "styles23": (0.933, 0.900, 0.925, 0.050),
    # 2026-11-25, second session (start d56aa7a). styles24 (other agents' own shapes: Copilot,
    # Cursor, Cline, Roo, OpenHands, Goose, OpenCode, Amp) and styles25 (long outputs whose
    # deciding line stands mid-way) were written blind and scored once early in the session,
    # then written on: styles24 0.892, 0.858, 0.950, 0.050 (d56aa7a and 6811adf alike) → 0.958,
    # 0.892, 0.975, 0.025 in-sample; styles25 0.700, 0.808, 0.675, 0.000 (d56aa7a) → 0.708,
    # 0.817, 0.700, 0.000 (c9ab840) → 0.833 in-sample. styles26 (outputs as users paste them)
    # and styles27 (loop runners and frameworks) were written blind at the same time and scored
    # once at the session's end, with no rule written on them: styles26 0.833, 0.900, 0.900,
    # 0.000 → 0.833, 0.908, 0.900, 0.000; styles27 0.892, 0.842, 0.900, 0.050 both (88cb81f).
    "styles24": (0.892, 0.858, 0.950, 0.050),
    "styles25": (0.708, 0.817, 0.700, 0.000),
    "styles26": (0.833, 0.908, 0.900, 0.000),
    "styles27": (0.892, 0.842, 0.900, 0.050),
}
FLOOR = 0.10


def test_headers_agree_with_folders() -> None:
    written = [c for k in [f"styles{n}" for n in range(2, 28)] for c in CASES[k]]
    assert len(ALL) >= 100 and len(written) >= 300
    for c in ALL + written:
        m = c.meta
        assert {"agent", "category", "decision", "action", "note"} <= set(m), c.path
        assert m["agent"] in STYLES + OTHER_AGENTS, c.path
        assert c.path.stem.startswith(f"{m['agent']}_"), c.path
        assert m["decision"] == FOLDER[c.verdict], c.path
        assert m["category"] in (None, *CATEGORIES), c.path
        assert m["action"] in (None, "wait", "backoff"), c.path
        if m["decision"] == "proceed":
            assert m["category"] is None, c.path


@pytest.mark.parametrize(
    "split",
    (
        "tune",
        "holdback",
        "styles2",
        "styles3",
        "styles4",
        "styles5",
        "styles6",
        "styles7",
        "styles8",
        "styles9",
        "styles10",
        "styles11",
        "styles12",
        "styles13",
        "styles14",
        "styles15",
        "styles16",
        "styles17",
        "styles18",
        "styles19",
        "styles20",
        "styles21",
        "styles22",
        "styles23",
        "styles24",
        "styles25",
        "styles26",
        "styles27",
    ),
)
def test_styles(split: str) -> None:
    rows = score(CASES[split])
    got = Figures.of(rows)
    print(table(f"../corpus_styles ({split})", rows))
    print(unsure_rates([r.case for r in rows], [r.interp for r in rows]))
    print("misjudged:\n" + mistakes(rows))
    if split in MEASURED:
        decision, category, caught, false_esc = MEASURED[split]
        assert got.decision >= math.floor((decision - FLOOR) * 100) / 100
        assert got.category >= math.floor((category - FLOOR) * 100) / 100
        assert got.caught >= math.floor((caught - FLOOR) * 100) / 100
        assert got.false_escalations <= false_esc + FLOOR
