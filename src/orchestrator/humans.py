"""Asking people: the terminal panel, waiting for an answer given elsewhere, and what an answer means.

An answer is recorded in the store before it is acted on, whichever channel it came through
(terminal, `orchestrator answer`, a `user-decision.json` file), so any process can act on it later.
"""

from __future__ import annotations

import getpass
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.prompt import Prompt

from orchestrator.interpret.model import WHY
from orchestrator.models import UserError
from orchestrator.store import Row, Store

AnswerKind = Literal["option", "recommended", "text", "retry", "skip", "abort"]

ALSO = "Also: 'retry', 'skip task', 'abort', or type guidance."
RETRY_WHY = (
    "Retrying on my own is not making progress; a decision from you is cheaper than more attempts."
)


@dataclass
class Answer:
    kind: AnswerKind
    text: str

    @property
    def plain(self) -> str:
        """The answer without its option letter: `B) In-memory` → `In-memory`."""
        return strip_letter(self.text)

    def guidance(self, esc: Row) -> str | None:
        """How the answer reads in the next prompt."""
        if self.kind in ("retry", "skip", "abort"):
            return None
        return f"A human answered the question {esc['question']!r}: {self.text}"


def strip_letter(text: str) -> str:
    return text[3:] if len(text) > 3 and text[0].isupper() and text[1:3] == ") " else text


def letter(i: int) -> str:
    return chr(ord("A") + i)


def parse_answer(raw: str, options: list[str], recommendation: str | None) -> Answer:
    """`B` picks option B; `skip` takes the recommendation; `retry`/`skip task`/`abort`; else guidance."""
    text = raw.strip()
    low = text.lower().rstrip(".!")
    if not text:
        raise UserError(
            "empty answer; give an option letter, 'skip', 'retry', 'skip task', 'abort' or text"
        )
    if low in ("skip", "recommended", "rec") and recommendation:
        return Answer("recommended", recommendation)
    if low in ("skip task", "skip-task"):
        return Answer("skip", "skip task")
    if low in ("retry", "r"):
        return Answer("retry", "retry")
    if low in ("abort", "a!", "quit"):
        return Answer("abort", "abort")
    if len(low) == 1 and options and "a" <= low <= letter(len(options) - 1).lower():
        i = ord(low) - ord("a")
        return Answer("option", f"{letter(i)}) {options[i]}")
    if len(low) == 1 and low == "s":
        return Answer("skip", "skip task")
    return Answer("text", text)


def answer_from_flags(
    esc: Row,
    *,
    text: str | None,
    option: str | None,
    recommended: bool,
    retry: bool,
    skip: bool,
    abort: bool,
) -> Answer:
    chosen = [
        x for x in (text is not None, option is not None, recommended, retry, skip, abort) if x
    ]
    if len(chosen) != 1:
        raise UserError(
            "give exactly one of: TEXT, --option X, --recommended, --retry, --skip, --abort"
        )
    options = esc["options"]
    if option is not None:
        i = ord(option.strip().upper()[:1] or "?") - ord("A")
        if not (0 <= i < len(options)) or len(option.strip()) != 1:
            valid = ", ".join(letter(k) for k in range(len(options))) or "none"
            raise UserError(f"escalation {esc['id']} has no option {option!r}; valid: {valid}")
        return Answer("option", f"{letter(i)}) {options[i]}")
    if recommended:
        if not esc["recommendation"]:
            raise UserError(
                f"escalation {esc['id']} has no recommendation; answer with text or --option"
            )
        return Answer("recommended", esc["recommendation"])
    if retry:
        return Answer("retry", "retry")
    if skip:
        return Answer("skip", "skip task")
    if abort:
        return Answer("abort", "abort")
    assert text is not None
    return parse_answer(text, options, esc["recommendation"])


def record_answer(
    store: Store, esc_id: int, answer: Answer, *, channel: str, responder: str | None = None
) -> Row:
    return store.answer_escalation(
        esc_id,
        response=answer.text,
        kind=answer.kind,
        responder=responder or getpass.getuser(),
        channel=channel,
    )


def render_panel(console: Console, esc: Row, title_task: str, *, how: str | None = None) -> None:
    """`how` says how to answer; the default fits the terminal prompt that follows the panel."""
    lines = [
        f"[bold]{escape(esc['detail'].get('asker', 'The agent'))}'s question:[/bold]",
        "",
        escape(esc["question"]),
    ]
    if esc["options"]:
        lines += ["", "[bold]Options:[/bold]"]
        lines += [f"  {letter(i)}) {escape(o)}" for i, o in enumerate(esc["options"])]
    if esc["recommendation"]:
        lines += ["", f"[bold]Recommendation:[/bold] {escape(esc['recommendation'])}"]
    lines += [
        "",
        f"[bold]Why I'm asking:[/bold] {escape(esc['why'] or WHY.get(esc['category'], RETRY_WHY))}",
    ]
    lines += ["", f"[dim]{escape(how or ALSO)}[/dim]"]
    console.print(
        Panel(
            "\n".join(lines),
            title=f"Task {escape(title_task)} - NEEDS HUMAN INPUT",
            border_style="yellow",
            expand=False,
        )
    )


def ask_in_terminal(console: Console, esc: Row) -> Answer:
    render_panel(console, esc, esc["task_id"])
    while True:
        raw = Prompt.ask(
            "Your response (or 'skip' for recommendation)",
            console=console,
            default="skip" if esc["recommendation"] else None,
        )
        try:
            return parse_answer(raw or "", esc["options"], esc["recommendation"])
        except UserError as exc:
            console.print(f"[red]{escape(str(exc))}[/red]")


def wait_for_answer(
    store: Store,
    esc_id: int,
    *,
    poll: float = 0.25,
    timeout: float | None = None,
    check_files: Callable[[], None] | None = None,
) -> Row | None:
    """Block until another process answers (CLI, file, …); polls the store a few times a second."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        if check_files is not None:
            check_files()
        row = store.escalation(esc_id)
        if row is not None and row["status"] == "answered":
            return row
        if deadline is not None and time.monotonic() > deadline:
            return None
        time.sleep(poll)


def read_user_decision(path: Path, esc: Row) -> Answer | None:
    """A `user-decision.json` written by hand or by another tool (seed 002's format)."""
    if not path.is_file():
        return None
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:  # bad JSON, not UTF-8, nested too deep
        raise UserError(
            f"cannot read the decision file: {exc}; write valid JSON", path=str(path)
        ) from None
    if not isinstance(data, dict):
        raise UserError(
            "the decision file must hold a JSON object with chosen_option, user_comment or action",
            path=str(path),
        )
    chosen = data.get("chosen_option")
    comment = data.get("user_comment")
    action = str(data.get("action", "")).lower()
    if action in ("retry", "skip", "abort"):
        return Answer(action, action if action != "skip" else "skip task")  # type: ignore[arg-type]
    if chosen:
        ans = answer_from_flags(
            esc,
            text=None,
            option=str(chosen),
            recommended=False,
            retry=False,
            skip=False,
            abort=False,
        )
        if comment:
            ans = Answer("option", f"{ans.text} — {comment}")
        return ans
    if comment:
        return Answer("text", str(comment))
    raise UserError("the decision file needs chosen_option, user_comment or action", path=str(path))
