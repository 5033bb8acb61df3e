"""Explicit status markers: the cheapest and most reliable signal, when an agent gives one.

Formats understood (the last verdict-bearing marker in the text wins):

- seed 000: `STATUS: needs_human|completed|failed`, `NEEDS_HUMAN: …`, `QUESTION:` / `OPTIONS:` /
  `RECOMMENDATION:`;
- seed 004: `## RECOVERY ESCALATE` (with `**Category:**`, `**Diagnosis:**`, `**Why User Needed:**`,
  `**Suggested Action:**`), `## RECOVERY COMPLETE`, `## RECOVERY FAILED`;
- GSD: `## CHECKPOINT REACHED` (`**Type:** human-verify|decision|human-action`, `### Checkpoint
  Details`, `### Awaiting`) and `## PLAN COMPLETE`;
- ralph: the `---RALPH_STATUS---` … `---END_RALPH_STATUS---` block and `<promise>…</promise>`;
- Taskmaster loops: `<loop-blocked>…</loop-blocked>`, `<loop-complete>`, `<loop-summary>`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from orchestrator.interpret.model import WHY_ACTION, WHY_BLOCKED, WHY_VERIFY
from orchestrator.interpret.phrases import REPEATED_FAILURES
from orchestrator.interpret.text import strip_md
from orchestrator.models import CATEGORIES, Category, Verdict
from orchestrator.rules.failure import last_match


@dataclass
class Marked:
    verdict: Verdict
    pos: int
    kind: str
    category: Category | None = None
    question: str | None = None
    options: list[str] = field(default_factory=list)
    recommendation: str | None = None
    why: str | None = None
    evidence: str | None = None
    error: str | None = None


_CODE_WORK = frozenset({"IMPLEMENTATION", "BUG_FIX", "REFACTORING", "TESTING", "DEBUGGING"})
"""Ralph's WORK_TYPE values whose item is verified by the tests (not DOCUMENTATION or PLANNING)."""
_RALPH = re.compile(r"-{3}RALPH_STATUS-{3}(.*?)(?:-{3}END_RALPH_STATUS-{3}|\Z)", re.S)
# Tag contents are stripped in code, not by `\s*` around a lazy group (cubic on a blank run).
_PROMISE = re.compile(r"<promise>([^<]*)</promise>", re.I)
_LOOP_BLOCKED = re.compile(r"<loop-blocked>(.*?)</loop-blocked>", re.S | re.I)
_LOOP_BLOCKED_END = re.compile(r"</loop-blocked>", re.I)
_LOOP_DONE = re.compile(
    r"<loop-(?:complete|summary)>(.*?)</loop-(?:complete|summary)>", re.S | re.I
)
_LOOP_DONE_END = re.compile(r"</loop-(?:complete|summary)>", re.I)
_STATUS = re.compile(
    r"^[ \t>*_`]*(?:STATUS|#{1,4}[ \t]*Verification)[*_`]*\s*:[*_`\s]*(?:►\s*)?(needs[_ -]?human|completed?|done|success|failed|failure|"
    # GSD's verifier (also as its report's heading, "## Verification: gaps_found"): passed |
    # gaps_found | human_needed; a BMAD story or Taskmaster task the run
    # leaves in progress is not done
    r"blocked|passed|gaps_found|human_needed|in[_ -]?progress)\b[*_`]*"
    # the verifier's score may follow the status: "Status: gaps_found — score 3/5 verified"
    r"(?P<note>\s+[—–(][^\n]*)?\s*$",
    re.I | re.M,
)
_WAITING_NOTE = re.compile(
    r"\b(?:blocked|awaiting|waiting|halt(?:ed)?|needs? (?:input|approval|a decision))\b", re.I
)
"""A story left in progress "(awaiting approval)" or "(blocked)": it waits for a person."""
_GAPS_FOUND = re.compile(
    r"^[^\w\n]{0,6}#{1,4}[^\n]{0,80}\b(?:Found Gaps|Gaps Found)\b", re.M | re.I
)
"""GSD's verifier report as the orchestrator shows it: "## ⚠ Phase 4 Verification Found Gaps",
"## ⚠ Phase 2: Team Invites — Gaps Found"."""
_AGENT_ERRORED = re.compile(
    r"\bError while running the agent: ([^\n]{1,300})(?:\n[^\n]*){0,6}?\n[^\n]*"
    r"\bAgent finished\. Final state: AgentState\.ERROR\b"
)
"""OpenHands headless ending in its ERROR state, with the error that put it there (stuck in a
loop, maximum iterations): the run failed, whatever its agent said before."""
_GATE_FAIL = re.compile(r"^[^\w\n]{0,6}(?:Gate|Gate decision|Quality gate)\s*:\s*\**FAIL\b", re.M)
"""BMAD's QA gate failing the story ("Gate: FAIL → docs/qa/gates/3.4.yml"): back to the developer."""
_HALTED = re.compile(
    r"^[^\w\n]*(?:[\w ]{1,30}\([\w ]{1,20}\):\s*)?HALT(?: reason)?\b(?:\s*[:—–-]|\s*$)"
    r"(?![^\n]*(?:" + REPEATED_FAILURES + r"))",
    re.M,
)
"""A HALT line of a BMAD agent ("💻 James (Dev): HALT: new dependency needs your approval", "⛔
HALT"), not the one for repeated failures: the story stays in progress because it waits."""
_SET_STATUS = re.compile(
    r"Successfully updated task (?P<id>[\w.]+) status (?:from [\"'“][^\"'”\n]*[\"'”] )?to [\"'“]([\w -]+)[\"'”]|"
    # BMAD's QA review ends on its verdict: "Recommended status: ✓ Ready for Done" / "✗ Changes Required"
    r"^[ \t>*_`]*Recommended status[*_`]*\s*:[*_`\s\[]*(?:[✓✗✔✘]\s*)?(Ready for Done|Done|Changes Required)\b",
    re.I | re.M,
)
"""A status the run set last: Taskmaster's `set-status` answer, BMAD's QA verdict."""


def _open_subtask(text: str, m: re.Match[str]) -> str | None:
    """A subtask of the task just set to done (`3.3 … ○ pending`) listed as still open after it."""
    rx = re.compile(
        rf"^[\s│|]*{re.escape(m.group('id'))}\.\d+\b[^\n]*?(?:○|►)?\s*\b(?:pending|in-progress)\b[^\n]*",
        re.M | re.I,
    )
    sub = rx.search(text, m.end())
    return " ".join(sub.group(0).split()) if sub else None


_SET_TO: dict[str, Verdict] = {
    "done": "completed",
    "ready for done": "completed",
    "blocked": "needs_human",
    "deferred": "needs_human",
    "in-progress": "failed",
    "pending": "failed",
    "changes required": "failed",
}
_NEEDS_HUMAN = re.compile(r"^[ \t>*_`]*NEEDS_HUMAN[*_`]*\s*:\s*(.*)$", re.M)
_QUESTION = re.compile(r"^[ \t>*_`]*QUESTION[*_`]*\s*:\s*(.*)$", re.M)
_OPTIONS = re.compile(r"^[ \t>*_`]*OPTIONS[*_`]*\s*:", re.M)
_RECOMMENDATION = re.compile(r"^[ \t>*_`]*RECOMMENDATION[*_`]*\s*:\s*(.*)$", re.M)
_RECOVERY = re.compile(r"^#{1,4}\s*RECOVERY\s+(ESCALATE|COMPLETE|FAILED)\b", re.M | re.I)
_CHECKPOINT = re.compile(r"^#{1,4}\s*CHECKPOINT REACHED\b", re.M | re.I)
_PLAN_DONE = re.compile(
    r"^#{1,4}\s*(?:[✓✔✅]\s*)?(?:PLAN|PHASE|TASK)(?:\s+[\w.-]*\d[\w.-]*)?\s+COMPLETE\b", re.M | re.I
)
_TOOL_RECORD_END = re.compile(r"[^\S\n]*(?:\n[^\S\n]*){1,3}</(?:details|tool-use)>", re.I)
"""`Status: **completed**` closing a `<details>` tool record (SpecStory exports of Cursor and
Copilot chats): the tool call finished, which says nothing about the agent's work."""
_PLACEHOLDER = re.compile(r"^(?:REASON|<[^>]*>|\.\.\.|…|\{[^}]*\}|\[[^\]]*\])$", re.I)


_BLANK_LINES = re.compile(r"\n(?:[^\S\n]*\n)+")
r"""Whitespace-only lines: dropping them changes no match below (values are whitespace-joined),
and keeps `^\s*` from rescanning a long blank run at every line start (quadratic)."""


def _field(block: str, name: str) -> str | None:
    """A `**Name:** value` field, its value running on until the next field or heading."""
    block = _BLANK_LINES.sub("\n", block)
    m = re.search(
        rf"^\s*[-*]?\s*\*\*{name}\s*:?\*\*\s*:?\s*(.*?)(?=^\s*[-*]?\s*\*\*[\w ]+:?\*\*|^#{{1,4}}\s|\Z)",
        block,
        re.M | re.S | re.I,
    )
    if not m:
        return None
    value = " ".join(m.group(1).split())
    return value or None


def _section(block: str, title: str) -> str | None:
    m = re.search(rf"^#{{2,5}}\s*{title}\s*$(.*?)(?=^#{{1,5}}\s|\Z)", block, re.M | re.S | re.I)
    if not m:
        return None
    value = m.group(1).strip()
    return value or None


def _block_after(text: str, start: int) -> str:
    """From START to the next level-1/2 heading that is not part of the block."""
    m = re.compile(r"^#{1,2}\s(?!#)", re.M).search(text, start + 3)
    return text[start : m.start()] if m else text[start:]


def _ralph(text: str) -> list[Marked]:
    out: list[Marked] = []
    for m in _RALPH.finditer(text):
        body = _BLANK_LINES.sub("\n", m.group(1))

        def get(name: str, body: str = body) -> str:
            mm = re.search(rf"^\s*{name}\s*:\s*(.+)$", body, re.M | re.I)
            return mm.group(1).strip() if mm else ""

        status = get("STATUS").upper()
        if "|" in status or not status:
            continue  # the template, not a report
        rec = get("RECOMMENDATION") or None
        tests = get("TESTS_STATUS").upper()
        done_n = re.match(r"\d+", get("TASKS_COMPLETED_THIS_LOOP"))
        ev = f"RALPH_STATUS: {status}"
        code = get("WORK_TYPE").upper() in _CODE_WORK
        if status.startswith("BLOCKED"):
            out.append(
                Marked(
                    "needs_human",
                    m.start(),
                    "ralph",
                    question=rec or "The agent reports it is blocked.",
                    why=WHY_BLOCKED,
                    evidence=ev,
                )
            )
        elif tests == "FAILING" or (tests == "NOT_RUN" and code):
            # its own block says the tests are red, or were never run on code it changed:
            # whatever STATUS or EXIT_SIGNAL claims, the item is not verified
            what = "tests failing" if tests == "FAILING" else "tests not run"
            out.append(
                Marked(
                    "failed",
                    m.start(),
                    "ralph",
                    evidence=f"{ev}, TESTS_STATUS: {tests}",
                    error=f"{what}; {rec or ''}".strip("; "),
                )
            )
        elif status.startswith("COMPLETE") or get("EXIT_SIGNAL").lower() == "true":
            out.append(Marked("completed", m.start(), "ralph", evidence=ev))
        elif done_n and int(done_n.group(0)) > 0:
            out.append(
                Marked(
                    "completed",
                    m.start(),
                    "ralph",
                    evidence=f"{ev}, {done_n.group(0)} task(s) completed",
                )
            )
        else:
            out.append(
                Marked(
                    "failed",
                    m.start(),
                    "ralph",
                    evidence=ev,
                    error="the agent reported IN_PROGRESS with no task completed",
                )
            )
    return out


def _checkpoint(text: str, m: re.Match[str]) -> Marked:
    block = _block_after(text, m.start())
    kind = (_field(block, "Type") or "").lower()
    details = _section(block, "Checkpoint Details") or ""
    awaiting = _section(block, "Awaiting")
    decision = _field(details, "Decision needed") or _field(block, "Decision needed")
    blocked_by = _field(block, "Blocked by")
    todo = _field(details, "What you need to do") or _field(details, "What was built")
    question = (
        decision
        or (f"{todo} {awaiting}" if todo and awaiting else None)
        or awaiting
        or blocked_by
        or (details.split("\n\n")[0] if details else None)
    )
    category: Category | None = None
    why: str | None = WHY_VERIFY
    if "decision" in kind:
        category = "ambiguous_requirements"
        why = None
    elif "action" in kind:
        why = WHY_ACTION
    return Marked(
        "needs_human",
        m.start(),
        "gsd-checkpoint",
        category=category,
        question=" ".join(question.split()) if question else None,
        why=why,
        evidence=f"CHECKPOINT REACHED ({kind or 'unknown type'})",
    )


_CHECKPOINT_BOX = re.compile(
    r"^[ \t║│|]*(?:🛑\s*)?CHECKPOINT:[ \t]*([^║│|\n]+?)[ \t]*[║│|]?[ \t]*$", re.M
)
"""GSD's checkpoint as its executor displays it, in a box: `║  CHECKPOINT: Verification Required  ║`."""
_YOUR_ACTION = re.compile(r"^[^\w\n]*YOUR ACTION:[ \t]*(.+)$", re.M)


def _checkpoint_box(text: str, m: re.Match[str]) -> Marked:
    """The displayed checkpoint waits for the user: what it asks is its `YOUR ACTION:` line (or
    its title); a decision checkpoint is a requirements question."""
    title = m.group(1).strip()
    action = _YOUR_ACTION.search(text, m.end())
    task = re.search(r"^[ \t]*Task:[ \t]*(.+)$", text[m.end() : m.end() + 600], re.M)
    question = " — ".join(
        x for x in (task and task.group(1).strip(), action and action.group(1).strip()) if x
    )
    low = title.lower()
    return Marked(
        "needs_human",
        m.start(),
        "gsd-checkpoint",
        category="ambiguous_requirements" if "decision" in low else None,
        question=question or title,
        why=WHY_ACTION if "action" in low else None if "decision" in low else WHY_VERIFY,
        evidence=f"CHECKPOINT: {title}",
    )


def _recovery(text: str, m: re.Match[str]) -> Marked:
    what = m.group(1).upper()
    block = _block_after(text, m.start())
    if what == "COMPLETE":
        return Marked("completed", m.start(), "recovery", evidence="RECOVERY COMPLETE")
    if what == "FAILED":
        err = _field(block, "Result") or _field(block, "Failure")
        return Marked("failed", m.start(), "recovery", evidence="RECOVERY FAILED", error=err)
    raw_cat = (
        (_field(block, "Category") or "")
        .strip()
        .strip("`")
        .lower()
        .replace(" ", "_")
        .replace("-", "_")
    )
    category: Category | None = next(
        (c for c in CATEGORIES if c == raw_cat or raw_cat.startswith(c.split("_")[0])), None
    )
    return Marked(
        "needs_human",
        m.start(),
        "recovery-escalate",
        category=category,
        question=_field(block, "Diagnosis"),
        recommendation=_field(block, "Suggested Action"),
        why=_field(block, "Why User Needed"),
        evidence="RECOVERY ESCALATE",
    )


def _tagged(rx: re.Pattern[str], end: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """`rx.finditer`, no further than the last closing tag: an opening tag with none after it
    cannot match, and is then not scanned to the end of the text (quadratic with many)."""
    last = last_match(end, text)
    return rx.finditer(text, 0, last.end()) if last else iter(())


_FENCE_OPEN = re.compile(
    r"[ \t]*(`{3,}|~{3,})[ \t]*(?:python|py|javascript|js|jsx|typescript|ts|tsx|json|ya?ml|toml|go|"
    r"rust|rs|java|kotlin|ruby|rb|php|c|cpp|csharp|cs|swift|markdown|md)\b"
)
_FENCE_CLOSE = re.compile(r"[ \t]*(`{3,}|~{3,})[ \t]*$")


def _mask_code_fences(text: str) -> str:
    """Blank the lines of fenced blocks of code or markup: a marker in one is an example (a test
    fixture, docs quoting the format), not what the agent reports. Plain and `text` fences stay
    (agents print their status there), and so does a fence never closed. One pass over the
    lines: a regex spanning open to close rescanned the text after each unclosed fence."""
    lines = text.split("\n")
    out: list[str] = []
    block: list[str] = []
    fence = ""
    for line in lines:
        if fence:
            block.append(line)
            close = _FENCE_CLOSE.match(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                out.extend(" " * len(b) for b in block)
                block, fence = [], ""
            continue
        if m := _FENCE_OPEN.match(line):
            fence, block = m.group(1), [line]
            continue
        out.append(line)
    out.extend(block)  # never closed: left as it is
    return "\n".join(out)


def read_markers(text: str) -> Marked | None:
    """The verdict an explicit marker gives, or None when the text carries none."""
    text = _mask_code_fences(text)
    found: list[Marked] = _ralph(text)
    masked = _RALPH.sub(lambda mm: " " * len(mm.group(0)), text)
    for m in _PROMISE.finditer(masked):
        promise = m.group(1).strip()
        if m.group(1) and len(promise) <= 80 and not _PLACEHOLDER.match(promise):
            found.append(Marked("completed", m.start(), "promise", evidence=m.group(0)))
    for m in _tagged(_LOOP_BLOCKED, _LOOP_BLOCKED_END, masked):
        reason = " ".join(m.group(1).split())
        if reason and not _PLACEHOLDER.match(reason):
            found.append(
                Marked(
                    "needs_human",
                    m.start(),
                    "loop-blocked",
                    question=reason,
                    why=WHY_BLOCKED,
                    evidence=m.group(0)[:200],
                )
            )
    for m in _tagged(_LOOP_DONE, _LOOP_DONE_END, masked):
        if m.group(1).strip() and not _PLACEHOLDER.match(m.group(1).strip()):
            found.append(Marked("completed", m.start(), "loop-complete", evidence=m.group(0)[:200]))
    for m in _RECOVERY.finditer(masked):
        found.append(_recovery(masked, m))
    for m in _CHECKPOINT.finditer(masked):
        found.append(_checkpoint(masked, m))
    for m in _CHECKPOINT_BOX.finditer(masked):
        found.append(_checkpoint_box(masked, m))
    boxes = [mk.pos for mk in found if mk.kind == "gsd-checkpoint"]
    for m in _YOUR_ACTION.finditer(masked):
        if not any(pos < m.start() for pos in boxes):  # a box's own prompt line is read with it
            q = m.group(1).strip()
            found.append(Marked("needs_human", m.start(), "gsd-checkpoint", question=q, evidence=q))
    for m in _PLAN_DONE.finditer(masked):
        found.append(
            Marked("completed", m.start(), "gsd-complete", evidence=m.group(0).strip("# "))
        )
    for m in _AGENT_ERRORED.finditer(masked):
        said = m.group(1).strip()
        found.append(Marked("failed", m.start(), "status", evidence=said, error=said))
    for rx in (_GATE_FAIL, _GAPS_FOUND):  # a verdict's own failing line: BMAD's gate, GSD's gaps
        for m in rx.finditer(masked):
            found.append(Marked("failed", m.start(), "status", evidence=m.group(0).strip("#⏺ ")))
    halted = _HALTED.search(masked) is not None
    for m in _STATUS.finditer(masked):
        if _TOOL_RECORD_END.match(masked, m.end(), m.end() + 200):
            continue  # a tool's own status in an export's tool-use record, not the agent's
        value = m.group(1).lower().replace(" ", "_").replace("-", "_")
        verdict: Verdict
        waits = value in ("inprogress", "in_progress") and (
            halted or _WAITING_NOTE.search(m.group("note") or "") is not None
        )
        if value.startswith("needs") or value in ("blocked", "human_needed") or waits:
            verdict = "needs_human"
        elif value.startswith("fail") or value in ("gaps_found", "inprogress", "in_progress"):
            verdict = "failed"
        else:
            verdict = "completed"
        found.append(Marked(verdict, m.start(), "status", evidence=m.group(0).strip()))
    for m in _SET_STATUS.finditer(masked):
        value = (m.group(2) or m.group(3)).lower().replace("_", "-")
        set_to = _SET_TO.get(value)
        if set_to == "completed" and m.group("id") and (sub := _open_subtask(masked, m)):
            # Taskmaster marks a task done while its own listing shows a subtask still open
            found.append(Marked("failed", m.start(), "status", evidence=sub, error=sub))
        elif set_to is not None:
            found.append(Marked(set_to, m.start(), "status", evidence=m.group(0).strip()))
    for rx, kind in ((_NEEDS_HUMAN, "needs-human"), (_QUESTION, "question"), (_OPTIONS, "options")):
        for m in rx.finditer(masked):
            q = m.group(1).strip() if m.groups() else None
            found.append(
                Marked(
                    "needs_human",
                    m.start(),
                    kind,
                    question=q or None,
                    evidence=m.group(0).strip()[:200],
                )
            )
    if not found:
        return None
    found.sort(key=lambda mk: mk.pos)
    last = found[-1]
    # a STATUS line after QUESTION/OPTIONS decides; QUESTION etc. only fill in the details
    verdict_markers = [mk for mk in found if mk.kind not in ("question", "options")]
    if verdict_markers and last.kind in ("question", "options"):
        status_last = verdict_markers[-1]
        if status_last.verdict == "needs_human":
            last = status_last
    if last.verdict == "needs_human":
        _fill_structured(masked, last)
        if last.error is None and last.kind == "status":
            nh = _NEEDS_HUMAN.search(masked)
            if nh and not last.question:
                last.question = nh.group(1).strip() or None
    if last.verdict == "failed" and last.error is None:
        after = masked[last.pos :].split("\n", 1)
        rest = after[1].strip() if len(after) > 1 else ""
        last.error = rest.split("\n")[0][:300] if rest else None
    return last


def _fill_structured(text: str, mk: Marked) -> None:
    """QUESTION/OPTIONS/RECOMMENDATION fields of seed 000's format, where present."""
    q = _QUESTION.search(text)
    if q:
        body = text[q.start(1) :]
        stop = re.search(r"^[ \t>*_`]*(?:OPTIONS|RECOMMENDATION|STATUS)[*_`]*\s*:", body, re.M)
        mk.question = " ".join((body[: stop.start()] if stop else body).split()) or mk.question
    r = _RECOMMENDATION.search(text)
    if r and r.group(1).strip() and mk.kind != "ralph":
        mk.recommendation = strip_md(r.group(1).strip())
