"""Asking people: the terminal panel, waiting for an answer given elsewhere, and what an answer means.

An answer is recorded in the store before it is acted on, whichever channel it came through
(terminal, `orchestrator answer`, a `user-decision.json` file), so any process can act on it later.
"""

from __future__ import annotations

import getpass
import os
import select
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.prompt import Prompt

from orchestrator.interpret.model import WHY_GENERIC, why_sentence
from orchestrator.models import UserError
from orchestrator.rows import ASKER_NAMES, EscalationRow
from orchestrator.store import AlreadyAnswered, Store

AnswerKind = Literal["option", "recommended", "text", "retry", "skip", "abort", "done"]

ALSO = "Also: 'retry', 'skip task', 'abort', or type guidance."
RETRY_WHY = (
    "Retrying on my own is not making progress; a decision from you is cheaper than more attempts."
)

ACTION_KEYS: dict[str, str] = {"retry": "r", "skip": "s", "abort": "a", "done": "d"}
"""What a person types for each action on an action panel (seed 004: Retry (r), Skip (s), Abort (a))."""
ACTION_WORDS: dict[str, tuple[str, ...]] = {
    "retry": ("retry",),
    "skip": ("skip", "skip task", "skip-task"),
    "abort": ("abort", "quit"),
    "done": ("done", "continue"),
}
ACTION_TEXT: dict[str, str] = {
    "retry": "retry",
    "skip": "skip task",
    "abort": "abort",
    "done": "done",
}
"""How an action answer is recorded (the `response` of the escalation)."""


@dataclass
class Answer:
    kind: AnswerKind
    text: str
    recorded: bool = field(default=False, compare=False)
    """Already in the store (a terminal prompt that raced a remote answer records the winner)."""

    @property
    def plain(self) -> str:
        """The answer without its option letter: `B) In-memory` → `In-memory`."""
        return strip_letter(self.text)

    def guidance(self, esc: EscalationRow) -> str | None:
        """How the answer reads in the next prompt."""
        if self.kind in ACTION_KEYS:
            return None
        return f"A human answered the question {esc['question']!r}: {self.text}"


@dataclass(frozen=True)
class Choice:
    """One option as a panel shows it: its key, its text, and its action (None: a real option)."""

    key: str
    text: str
    action: str | None
    position: int


def strip_letter(text: str) -> str:
    return text[3:] if len(text) > 3 and text[0].isupper() and text[1:3] == ") " else text


def letter(i: int) -> str:
    return chr(ord("A") + i)


def panel_actions(options: Sequence[str], detail: Any) -> list[str | None] | None:
    """An action panel's action per option (None for a real option), else None.

    A panel is an action panel when `detail["actions"]` lists known actions (retry, skip, abort,
    done) aligned with the first options; options after them are real options (a consultant's
    proposal). An action listed more than once (a decision checkpoint's own options, all "done")
    names real options too: they keep their letters."""
    actions = detail.get("actions") if isinstance(detail, Mapping) else None
    if (
        not isinstance(actions, list)
        or not actions
        or len(actions) > len(options)
        or any(not isinstance(a, str) or a not in ACTION_KEYS for a in actions)
    ):
        return None
    out: list[str | None] = [a if actions.count(a) == 1 else None for a in actions]
    return out + [None] * (len(options) - len(actions))


def choices(options: Sequence[str], actions: Sequence[str | None] | None) -> list[Choice]:
    """The panel's keys: letters (by position, as in `hil-request.json`) for real options, `r`,
    `s`, `a`, `d` for actions — or the action's word when its key is also a real option's letter."""
    acts = list(actions or [None] * len(options))
    letters = {letter(i).lower() for i, a in enumerate(acts) if a is None}
    out = []
    for i, (text, action) in enumerate(zip(options, acts, strict=True)):
        if action is None:
            out.append(Choice(letter(i), text, None, i))
        else:
            key = ACTION_KEYS[action]
            out.append(Choice(action if key in letters else key, text, action, i))
    return out


def chosen(choice: Choice) -> Answer:
    if choice.action is None:
        return Answer("option", f"{choice.key}) {choice.text}")
    return Answer(choice.action, ACTION_TEXT[choice.action])  # type: ignore[arg-type]


def no_recommendation() -> UserError:
    return UserError(
        "there is no recommendation; pick one of the options, type guidance for the agent, "
        "or 'skip task' to skip the task"
    )


def parse_answer(
    raw: str,
    options: list[str],
    recommendation: str | None,
    actions: Sequence[str | None] | None = None,
) -> Answer:
    """What a person typed. With `actions` (an action panel, see `panel_actions`): a choice's key
    (`r`, `s`, `a`, `d`, or a real option's letter), an action's word, an option's text, `rec`
    for the recommendation. Otherwise `B` picks option B and `skip` takes the recommendation.
    `retry`/`skip task`/`abort` always work; anything else is guidance."""
    text = raw.strip()
    low = text.lower().rstrip(".!")
    if not text:
        raise UserError(
            "empty answer; give an option letter, 'skip', 'retry', 'skip task', 'abort' or text"
        )
    if actions is not None:
        panel = choices(options, actions)
        for c in panel:
            if low == c.key.lower() or low == c.text.lower().rstrip(".!"):
                return chosen(c)
        for c in panel:
            if c.action and low in ACTION_WORDS[c.action]:
                return chosen(c)
        if low in ("rec", "recommended") or (low == "skip" and "skip" not in actions):
            if recommendation:
                return Answer("recommended", recommendation)
            raise no_recommendation()
    elif low in ("skip", "recommended", "rec"):
        if recommendation:
            return Answer("recommended", recommendation)
        raise no_recommendation()
    if low in ("skip task", "skip-task"):
        return Answer("skip", "skip task")
    if low == "retry" or (actions is None and low == "r"):
        return Answer("retry", "retry")
    if low in ("abort", "quit"):
        return Answer("abort", "abort")
    if actions is not None:
        if len(low) == 1:
            keys = ", ".join(c.key for c in choices(options, actions))
            raise UserError(f"{text!r} is not one of the choices ({keys}); type one, or guidance")
        return Answer("text", text)
    if len(low) == 1 and options and "a" <= low <= letter(len(options) - 1).lower():
        i = ord(low) - ord("a")
        return Answer("option", f"{letter(i)}) {options[i]}")
    if len(low) == 1 and low == "s":
        return Answer("skip", "skip task")
    return Answer("text", text)


def option_answer(esc: EscalationRow, option: str) -> Answer:
    """`--option X` (and a decision file's `chosen_option`): a key exactly as the panel shows it
    (`a` is Abort where the panel says `a) Abort`), else the option at letter X's position (the
    letters of seed 002's `hil-request.json`), else an action's word or an option's text."""
    options = esc["options"]
    panel = choices(options, panel_actions(options, esc.get("detail")))
    raw = option.strip()
    found = next((c for c in panel if raw == c.key), None)
    if found is None and len(raw) == 1 and 0 <= ord(raw.upper()) - ord("A") < len(panel):
        found = panel[ord(raw.upper()) - ord("A")]
    low = raw.lower()
    found = found or next(
        (
            c
            for c in panel
            if low == c.text.lower() or (c.action is not None and low in ACTION_WORDS[c.action])
        ),
        None,
    )
    if found is None:
        valid = ", ".join(c.key for c in panel) or "none"
        raise UserError(f"escalation {esc['id']} has no option {option!r}; valid: {valid}")
    if found.action is None:
        return Answer("option", f"{letter(found.position)}) {found.text}")
    return chosen(found)


def answer_from_flags(
    esc: EscalationRow,
    *,
    text: str | None,
    option: str | None,
    recommended: bool,
    retry: bool,
    skip: bool,
    abort: bool,
) -> Answer:
    chosen_ = [
        x for x in (text is not None, option is not None, recommended, retry, skip, abort) if x
    ]
    if len(chosen_) != 1:
        raise UserError(
            "give exactly one of: TEXT, --option X, --recommended, --retry, --skip, --abort"
        )
    if option is not None:
        return option_answer(esc, option)
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
    actions = panel_actions(esc["options"], esc.get("detail"))
    try:
        return parse_answer(text, esc["options"], esc["recommendation"], actions)
    except UserError as exc:
        raise UserError(f"escalation {esc['id']}: {exc}") from None


def record_answer(
    store: Store, esc_id: int, answer: Answer, *, channel: str, responder: str | None = None
) -> EscalationRow:
    if answer.recorded and (row := store.escalation(esc_id)) is not None:
        return row
    return store.answer_escalation(
        esc_id,
        response=answer.text,
        kind=answer.kind,
        responder=responder or getpass.getuser(),
        channel=channel,
    )


def render_panel(
    console: Console, esc: EscalationRow, title_task: str, *, how: str | None = None
) -> None:
    """`how` says how to answer; the default fits the terminal prompt that follows the panel."""
    actions = panel_actions(esc["options"], esc.get("detail"))
    lines = [
        f"[bold]{escape(ASKER_NAMES.get(esc['asker'], 'The agent'))}'s question:[/bold]",
        "",
        escape(esc["question"]),
    ]
    if esc["options"]:
        lines += ["", "[bold]Options:[/bold]"]
        lines += [f"  {escape(c.key)}) {escape(c.text)}" for c in choices(esc["options"], actions)]
    if esc["recommendation"]:
        lines += ["", f"[bold]Recommendation:[/bold] {escape(esc['recommendation'])}"]
    fallback = RETRY_WHY if esc["asker"] == "orchestrator" else WHY_GENERIC
    why = why_sentence(esc["why"], esc["category"], fallback)
    lines += ["", f"[bold]Why I'm asking:[/bold] {escape(why)}"]
    if how is None and actions is not None:
        how = "Type a key or its word (retry, skip, abort, done), or guidance for the agent."
    lines += ["", f"[dim]{escape(how or ALSO)}[/dim]"]
    console.print(
        Panel(
            "\n".join(lines),
            title=f"Task {escape(title_task)} - NEEDS HUMAN INPUT",
            border_style="yellow",
            expand=False,
        )
    )


def ask_in_terminal(console: Console, esc: EscalationRow, store: Store | None = None) -> Answer:
    """The panel, then a prompt until the answer parses (a bad one is said, and asked again).
    With `store`, the prompt races an answer given elsewhere (the web page, `answer`, MCP): the
    first one recorded wins (the store's answer is first-wins), and the terminal shows which."""
    render_panel(console, esc, esc["task_id"])
    actions = panel_actions(esc["options"], esc.get("detail"))
    rec = esc["recommendation"]
    if actions is not None:
        keys = "/".join(c.key for c in choices(esc["options"], actions))
        prompt = f"Your choice ({keys}{', rec' if rec else ''}) or guidance"
        default = "rec" if rec else None
    else:
        prompt = "Your response (or 'skip' for recommendation)" if rec else "Your response"
        default = "skip" if rec else None
    fd = _stdin_fd() if store is not None else None
    while True:
        if store is None or fd is None:
            raw = Prompt.ask(prompt, console=console, default=default)
        else:
            line = _race_line(console, Prompt(prompt, console=console), default, fd, store, esc)
            if not isinstance(line, str):
                return _shown(console, line)
            raw = line
        try:
            ans = parse_answer(raw or "", esc["options"], rec, actions)
        except UserError as exc:
            console.print(f"[red]{escape(str(exc))}[/red]")
            continue
        if store is None or fd is None:
            return ans
        try:
            record_answer(store, esc["id"], ans, channel="terminal")
        except AlreadyAnswered:  # an answer from elsewhere came in just before this one
            row = store.escalation(esc["id"])
            assert row is not None
            return _shown(console, row)
        return Answer(ans.kind, ans.text, recorded=True)


def _stdin_fd() -> int | None:
    """Standard input's descriptor when `select` can watch it (not on Windows, not replaced)."""
    if sys.platform == "win32":
        return None
    try:
        return sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def _race_line(
    console: Console,
    prompt: Prompt,
    default: str | None,
    fd: int,
    store: Store,
    esc: EscalationRow,
    poll: float = 0.25,
) -> str | EscalationRow:
    """One line typed at the terminal, or the escalation's row once someone answered it elsewhere;
    stdin is read in short slices (the terminal keeps its own line editing) between store polls."""
    console.print(prompt.make_prompt(default if default is not None else ...), end="")
    buf = b""
    while True:
        ready, _, _ = select.select([fd], [], [], poll)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                raise EOFError
            buf += chunk
            if b"\n" in buf:
                text = buf.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip()
                return text if text or default is None else default
            continue
        row = store.escalation(esc["id"])
        if row is not None and row["status"] == "answered":
            return row


def _shown(console: Console, row: EscalationRow) -> Answer:
    """The answer that won the race, as the terminal shows it."""
    who = f" by {row['responder']}" if row["responder"] else ""
    console.print(
        f"\n[yellow]Answered elsewhere ({escape(row['channel'] or '?')}{escape(who)}):[/yellow] "
        f"{escape(row['response'] or '')}"
    )
    return Answer(row["response_kind"], row["response"] or "", recorded=True)  # type: ignore[arg-type]


def wait_for_answer(
    store: Store,
    esc_id: int,
    *,
    poll: float = 0.25,
    timeout: float | None = None,
    check_files: Callable[[], None] | None = None,
) -> EscalationRow | None:
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


def read_user_decision(path: Path, esc: EscalationRow) -> Answer | None:
    """The `Answer` in a `user-decision.json` written by hand or by another tool (seed 002's
    format); read and validated by `consultant.files.read_decision_file` (a broken file is a
    one-line UserError), converted here: an action, else the chosen option (with the comment),
    else the comment as guidance."""
    from orchestrator.consultant.files import ACTIONS, read_decision_file

    data = read_decision_file(path)
    if data is None:
        return None
    action = str(data.get("action") or "").strip().lower()
    comment = str(data.get("user_comment") or "").strip()
    if action in ACTIONS:
        return Answer(action, action if action != "skip" else "skip task")  # type: ignore[arg-type]
    chosen = data.get("chosen_option")
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
        if not comment or ans.kind != "option":  # an action panel's choice stays that action
            return ans
        return Answer("option", f"{ans.text} — {comment}")
    return Answer("text", comment)
